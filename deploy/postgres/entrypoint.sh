#!/bin/sh
# Entrypoint of the compose deployment's Postgres (service postgres): refuses to start without real
# passwords in its secrets, then runs the image's own entrypoint, which reads the superuser's
# password from POSTGRES_PASSWORD_FILE; the init script (init-vigil-events.sh) reads the vigil
# role's from VIGIL_DB_PASSWORD_FILE.
set -eu
. /vigil-deploy/lib/secrets.sh

require_secret "${POSTGRES_PASSWORD_FILE:?}" "Temporal's database password (secret postgres_password)" >/dev/null || exit 1
require_secret "${VIGIL_DB_PASSWORD_FILE:?}" "the vigil role's password (secret vigil_db_password)" >/dev/null || exit 1

exec docker-entrypoint.sh "$@"
