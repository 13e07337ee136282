#!/bin/sh
# One-shot job of the compose deployment (service temporal-schema, image temporalio/admin-tools):
# creates Temporal's two databases on Postgres, `temporal` and `temporal_visibility`, and brings
# their schemas to the version this admin-tools image ships. Every step is idempotent (an existing
# database is kept, applied versions are skipped), so it runs on every `docker compose up`, and
# after moving the server and admin-tools images to a new version it migrates the schema before
# the server starts.
# Environment: POSTGRES_SEEDS (host), DB_PORT, POSTGRES_USER, SQL_PASSWORD_FILE (the compose
# secret; refused when missing or a default) or SQL_PASSWORD (read by temporal-sql-tool).
set -eu

if [ -n "${SQL_PASSWORD_FILE:-}" ]; then
  . /vigil-deploy/lib/secrets.sh
  SQL_PASSWORD=$(require_secret "$SQL_PASSWORD_FILE" "Temporal's database password (secret postgres_password)") || exit 1
  export SQL_PASSWORD
fi
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port=${DB_PORT:-5432}
versioned=/etc/temporal/schema/postgresql/v12

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" -u "$POSTGRES_USER" "$@"
}

# setup DATABASE SCHEMA_DIR
setup() {
  echo "temporal-schema: database $1"
  sql --db "$1" create
  sql --db "$1" setup-schema -v 0.0
  sql --db "$1" update-schema -d "$versioned/$2/versioned"
}

setup temporal temporal
setup temporal_visibility visibility
echo 'temporal-schema: done'
