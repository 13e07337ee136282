#!/usr/bin/env bash
# The slow tier (npm run test:slow), which .ci/run runs after `npm test`: the files of
# tests/support/tiers.ts one at a time (vitest.slow.config.ts), then the real-CLI suite
# (scripts/test-real-clis.sh: installs the pinned agent CLIs into a cache, then one run per CLI
# against the local model server), then the cluster suite (scripts/test-cluster.sh: builds the
# Temporal server from the Go module proxy into a cache, ~8 min cold, then the demo through it on
# Postgres). Installs what it needs first, like `npm test`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh || exit $?

status=0
echo "test:slow: package, chaos, the default-knobs matrix, escalation"
npx --no-install vitest run --config vitest.slow.config.ts "$@" || status=$?
echo "test:slow: real agent CLIs"
bash scripts/test-real-clis.sh || status=$?
echo "test:slow: the cluster path (the Temporal server on Postgres)"
bash scripts/test-cluster.sh || status=$?
exit "$status"
