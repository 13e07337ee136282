#!/usr/bin/env bash
# The slow tier (npm run test:slow), which .ci/run runs after `npm test`: the files of
# tests/support/tiers.ts two at a time in its order (vitest.slow.config.ts), then the real-CLI suite
# (scripts/test-real-clis.sh: installs the pinned agent CLIs into a cache, then one run per CLI
# against the local model server), then the cluster suite (scripts/test-cluster.sh: builds the
# Temporal server from the Go module proxy into a cache, ~8 min cold, then the demo through it on
# Postgres). Installs what it needs first, like `npm test`.
#
# Every step runs even when one before it failed, so one run shows every failure. A step's failed
# tests would scroll away under the steps after it, and CI keeps only the end of the output: the
# last lines say which steps failed and name their failed tests (each step's whole output is kept
# in test-artifacts/slow-tier/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh || exit $?

logs=test-artifacts/slow-tier
mkdir -p "$logs"
status=0
failed=()

# step NAME LOG COMMAND...: runs the command with its output shown and kept in $logs/LOG.
step() {
  local name="$1" log="$logs/$2"
  shift 2
  echo "test:slow: $name"
  "$@" 2>&1 | tee "$log"
  local s=${PIPESTATUS[0]}
  if [ "$s" -ne 0 ]; then
    status=$s
    failed+=("$name (exit $s, $log)")
  fi
}

step "package, chaos, the default-knobs matrix, escalation, streams" vitest.log \
  npx --no-install vitest run --config vitest.slow.config.ts "$@"
step "real agent CLIs" real-clis.log bash scripts/test-real-clis.sh
step "the cluster path (the Temporal server on Postgres)" cluster.log bash scripts/test-cluster.sh

if [ "$status" -eq 0 ]; then
  echo "test:slow: every step passed"
else
  echo
  echo "test:slow: ${#failed[@]} step(s) failed:"
  for f in "${failed[@]}"; do
    echo "  - $f"
    log="${f##*, }"
    bash scripts/vitest-failures.sh "${log%)}"
  done
fi
exit "$status"
