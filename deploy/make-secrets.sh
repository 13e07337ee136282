#!/bin/sh
# Writes the secrets the compose deployment refuses to start without, into DIR (default
# ./secrets, next to docker-compose.yml; git and the image build ignore it): postgres_password
# (Temporal's database user), vigil_db_password (the event store's `vigil` role) and
# vigil_codec_key (the payload encryption key of docker-compose.tls.yml). Random, hex, one per
# file; a file that exists is kept, so running it again changes nothing. With --tls, also the dev
# certificate authority and certificates of the TLS variant (deploy/tls/make-dev-certs.sh).
#
#   sh deploy/make-secrets.sh [--tls] [DIR]
#
# Postgres takes its passwords when its volume is new: to change one later, change it in Postgres
# too (ALTER ROLE ... PASSWORD), then in the file, then restart the services.
set -eu

tls=false
if [ "${1:-}" = "--tls" ]; then
  tls=true
  shift
fi
dir=${1:-./secrets}
umask 077
mkdir -p "$dir"
# Containers read the files through bind mounts as their own users (postgres, temporal, node):
# the folder keeps other users of this host out, the files stay readable inside the containers.
chmod 700 "$dir"

random_hex() {
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -hex 32
  else
    od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
    echo
  fi
}

for name in postgres_password vigil_db_password; do
  if [ -s "$dir/$name" ]; then
    echo "make-secrets: $dir/$name exists, kept"
  else
    random_hex > "$dir/$name"
    echo "make-secrets: wrote $dir/$name"
  fi
  chmod 644 "$dir/$name"
done

# The payload codec key: 32 random bytes, base64 (workers/codec.ts reads base64 or hex).
if [ -s "$dir/vigil_codec_key" ]; then
  echo "make-secrets: $dir/vigil_codec_key exists, kept"
else
  if command -v openssl >/dev/null 2>&1; then openssl rand -base64 32 > "$dir/vigil_codec_key"; else random_hex > "$dir/vigil_codec_key"; fi
  echo "make-secrets: wrote $dir/vigil_codec_key (the vigil CLI that starts and reads runs needs the same key: VIGIL_CODEC_KEY_FILE)"
fi
chmod 644 "$dir/vigil_codec_key"

if [ "$tls" = true ]; then
  sh "$(dirname "$0")/tls/make-dev-certs.sh" "$dir/tls"
fi
