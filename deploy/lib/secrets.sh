#!/bin/sh
# Sourced by the entrypoints of the compose deployment (docker-compose.yml): reads a secret that
# compose mounts as a file under /run/secrets/, and refuses to go on without a real one.
#
#   value=$(require_secret FILE WHAT) || exit 1
#
# Refused, with a line on stderr saying what to do: a missing, unreadable or empty file, a
# well-known default (the passwords this deployment used to fall back to, and their like), and
# anything shorter than 16 characters. deploy/make-secrets.sh writes acceptable ones.

# The passwords nobody may deploy with (compared without case).
VIGIL_DEFAULT_SECRETS='temporal vigil postgres password changeme change-me secret admin root example test default'

require_secret() {
  rs_file=$1
  rs_what=$2
  rs_fix="write one with deploy/make-secrets.sh (or: openssl rand -hex 32 > FILE) and start again; see docs/team-deployment.md"
  if [ ! -r "$rs_file" ]; then
    echo "refusing to start: $rs_what is not readable at $rs_file (the compose secret is missing); $rs_fix" >&2
    return 1
  fi
  # Command substitution drops the trailing newline a text editor leaves.
  rs_value=$(cat "$rs_file")
  if [ -z "$rs_value" ]; then
    echo "refusing to start: $rs_what ($rs_file) is empty; $rs_fix" >&2
    return 1
  fi
  rs_lower=$(printf '%s' "$rs_value" | tr '[:upper:]' '[:lower:]')
  for rs_default in $VIGIL_DEFAULT_SECRETS; do
    if [ "$rs_lower" = "$rs_default" ]; then
      echo "refusing to start: $rs_what ($rs_file) is the well-known default \"$rs_default\"; $rs_fix" >&2
      return 1
    fi
  done
  if [ "${#rs_value}" -lt 16 ]; then
    echo "refusing to start: $rs_what ($rs_file) is shorter than 16 characters; $rs_fix" >&2
    return 1
  fi
  printf '%s' "$rs_value"
}
