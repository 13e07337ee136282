#!/usr/bin/env bash
# The whole check, as CI runs it: install what is missing, type-check, lint, check the format, then every test
# (unit, workflow and CLI end-to-end tests against a real Temporal dev server the suite starts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh

# The type-check, the lint and the format check read the same files and need nothing of each other:
# they run at once (about 55 s instead of 105 s on two cores), each one's output kept and shown
# once it ends, in this order. Any failure stops here, after all three have said what they found.
checks="$(mktemp -d)"
npx --no-install tsc --noEmit -p tsconfig.json >"$checks/type-check" 2>&1 &
pids=("$!")
npx --no-install eslint . >"$checks/lint" 2>&1 &
pids+=("$!")
npx --no-install prettier --check . --log-level warn >"$checks/format" 2>&1 &
pids+=("$!")
names=(type-check lint format)
failed=0
for i in 0 1 2; do
  name=${names[$i]}
  if wait "${pids[$i]}"; then
    echo "test: $name passed"
  else
    echo "test: $name failed:"
    cat "$checks/$name"
    [ "$name" = format ] && echo "test: files not formatted; run npm run format" >&2
    failed=1
  fi
done
rm -rf "$checks"
[ "$failed" -eq 0 ] || exit 1

out="$(mktemp -d)"
report="$out/vitest.json"
# The output is kept too: CI keeps only its end, so what failed is said again there (below).
set +e
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" 2>&1 | tee "$out/vitest.log"
status=${PIPESTATUS[0]}
set -e
if [ -f "$report" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    if (r.numTotalTests === 0) { console.error("test: no test ran"); process.exit(1); }
  ' "$report" || status=1
fi
if [ "$status" -ne 0 ]; then
  echo "test: vitest failed (exit $status); what failed:"
  bash scripts/vitest-failures.sh "$out/vitest.log"
fi
exit "$status"
