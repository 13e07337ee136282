#!/bin/sh
# Entrypoint of the Vigil image: `vigil "$@"` (a worker by default), once the secrets the compose
# deployment gives as files are in place. VIGIL_DB_PASSWORD_FILE (the compose secret
# vigil_db_password) becomes PGPASSWORD, which the event store's Postgres client uses with the
# password-less DATABASE_URL; a missing, empty or default password refuses to start. Other
# secrets Vigil reads from files itself (VIGIL_CODEC_KEY_FILE, TEMPORAL_TLS_*_PATH).
set -eu

if [ -n "${VIGIL_DB_PASSWORD_FILE:-}" ]; then
  . /app/deploy/lib/secrets.sh
  PGPASSWORD=$(require_secret "$VIGIL_DB_PASSWORD_FILE" "the vigil role's password (secret vigil_db_password)") || exit 1
  export PGPASSWORD
fi

exec node /app/bin/vigil.js "$@"
