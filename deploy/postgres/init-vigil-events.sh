#!/bin/sh
# Creates Vigil's event store database, `vigil_events`, and the role that owns it, `vigil`, next to
# Temporal's databases on the compose deployment's Postgres. The postgres image runs this from
# /docker-entrypoint-initdb.d/ once, when its data volume is new; it is idempotent, so for a volume
# that predates it run it by hand:
#   docker compose exec postgres sh /docker-entrypoint-initdb.d/10-vigil-events.sh
# Environment: POSTGRES_USER (the superuser), VIGIL_DB_PASSWORD_FILE (the compose secret holding
# the `vigil` role's password, which the workers read from the same secret), or VIGIL_DB_PASSWORD
# when run by hand.
set -e

if [ -n "${VIGIL_DB_PASSWORD_FILE:-}" ]; then
  . /vigil-deploy/lib/secrets.sh
  VIGIL_DB_PASSWORD=$(require_secret "$VIGIL_DB_PASSWORD_FILE" "the vigil role's password (secret vigil_db_password)") || exit 1
fi
: "${VIGIL_DB_PASSWORD:?set VIGIL_DB_PASSWORD_FILE (or VIGIL_DB_PASSWORD), the password of the vigil role}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v vigil_password="$VIGIL_DB_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE vigil LOGIN PASSWORD %L', :'vigil_password')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'vigil')
\gexec
SELECT 'CREATE DATABASE vigil_events OWNER vigil'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'vigil_events')
\gexec
-- Only its owner (and the superuser) may connect to the event store.
REVOKE ALL ON DATABASE vigil_events FROM PUBLIC;
SQL
