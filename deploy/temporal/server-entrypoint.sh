#!/bin/sh
# Entrypoint of the compose deployment's Temporal server (service temporal): its Postgres password
# comes from the compose secret (POSTGRES_PWD_FILE), refused when missing or a default, and is
# handed to the image's own entrypoint (/etc/temporal/entrypoint.sh, which renders the server's
# embedded config template from the environment) as POSTGRES_PWD.
set -eu
. /vigil-deploy/lib/secrets.sh

POSTGRES_PWD=$(require_secret "${POSTGRES_PWD_FILE:?}" "Temporal's database password (secret postgres_password)") || exit 1
export POSTGRES_PWD
unset POSTGRES_PWD_FILE

exec /etc/temporal/entrypoint.sh "$@"
