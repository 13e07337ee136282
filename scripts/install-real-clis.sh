#!/usr/bin/env bash
# Installs the pinned real agent CLIs (scripts/real-clis.pins) for the real-CLI suite
# (npm run test:real-clis) into a cache outside the repository:
#   ${VIGIL_REAL_CLIS_DIR:-${XDG_CACHE_HOME:-~/.cache}/vigil/real-clis}/<provider>-<version>/bin/<binary>
# npm packages with `npm install --prefix`, aider-chat in a Python venv. A finished install is
# stamped (.installed) and skipped next time, so a cached run takes well under a second; a broken
# one is redone. Prints one line per CLI: `<provider> <version> <binary path>` or `<provider> FAILED`.
#
#   scripts/install-real-clis.sh                 # every pinned CLI
#   scripts/install-real-clis.sh claude codex    # only these
# Exits 1 when any requested CLI failed to install (the others are still installed).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$root/scripts/real-clis.pins"
cache="${VIGIL_REAL_CLIS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vigil/real-clis}"
mkdir -p "$cache"
# One install at a time: .ci/run starts this early, in the background, and the real-CLI step runs it
# again; the second waits for the first (and then finds every CLI installed) instead of removing a
# folder the first is still installing into.
exec 9>"$cache/.lock"
if ! flock -n 9; then
  echo "install-real-clis: another install is under way; waiting for it" >&2
  flock 9
fi

wanted=("$@")
want() {
  [ "${#wanted[@]}" -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

install_npm() { # dir package version binary
  local dir="$1" package="$2" version="$3" binary="$4"
  npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$package@$version" >"$dir/install.log" 2>&1 || return 1
  ln -sf "../node_modules/.bin/$binary" "$dir/bin/$binary"
}

install_pypi() { # dir package version binary
  local dir="$1" package="$2" version="$3" binary="$4"
  python3 -m venv "$dir/venv" >"$dir/install.log" 2>&1 || return 1
  "$dir/venv/bin/pip" install --quiet --disable-pip-version-check "$package==$version" >>"$dir/install.log" 2>&1 || return 1
  ln -sf "../venv/bin/$binary" "$dir/bin/$binary"
}

status=0
found=0
while read -r provider registry package version binary; do
  case "$provider" in '' | '#'*) continue ;; esac
  want "$provider" || continue
  found=$((found + 1))
  dir="$cache/$provider-$version"
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/bin"
    echo "installing $package@$version into $dir ..." >&2
    if "install_$registry" "$dir" "$package" "$version" "$binary" && [ -x "$dir/bin/$binary" ]; then
      date -u +%FT%TZ >"$dir/.installed"
    else
      echo "$provider FAILED (see $dir/install.log)"
      tail -n 20 "$dir/install.log" >&2 || true
      status=1
      continue
    fi
  fi
  echo "$provider $version $dir/bin/$binary"
done <"$pins"

if [ "$found" -eq 0 ]; then
  echo "install-real-clis: no pinned CLI named ${wanted[*]}" >&2
  exit 2
fi
exit "$status"
