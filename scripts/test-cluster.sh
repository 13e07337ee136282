#!/usr/bin/env bash
# The cluster suite (npm run test:cluster): the team deployment's path without Docker. Builds the
# Temporal server and temporal-sql-tool at the compose image's version from the Go module proxy
# into a cache outside the repository (scripts/install-temporal-server.sh; quick when cached),
# builds dist/ when the sources are newer (the suite runs the compiled CLI and workers), then runs
# tests/cluster: the real server on the embedded Postgres, two `vigil worker` processes, the demo
# scenario through a server kill -9. Arguments go to vitest.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -f node_modules/.package-lock.json ] || [ ! -f dist/cli/main.js ]; then
  bash scripts/bootstrap.sh || exit $?
fi

bash scripts/install-temporal-server.sh >/dev/null || {
  echo "test-cluster: the Temporal server could not be built (see above)" >&2
  exit 2
}

main=dist/cli/main.js
if [ -n "$(find cli activities workflows schemas workers rounds examples -name '*.ts' -newer "$main" -print -quit)" ]; then
  echo "test-cluster: building dist/"
  npm run --silent build || echo "test-cluster: warning: the build reported errors; using what it emitted" >&2
fi

npx --no-install vitest run --config tests/cluster/vitest.config.ts "$@"
