#!/usr/bin/env bash
# The whole check, as CI runs it: install what is missing, type-check, lint, check the format, then every test
# (unit, workflow and CLI end-to-end tests against a real Temporal dev server the suite starts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh
echo "test: type-check"
npx --no-install tsc --noEmit -p tsconfig.json
echo "test: lint"
npx --no-install eslint .
echo "test: format"
npx --no-install prettier --check . --log-level warn || { echo "test: files not formatted; run npm run format" >&2; exit 1; }

report="$(mktemp -d)/vitest.json"
status=0
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
if [ -f "$report" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    if (r.numTotalTests === 0) { console.error("test: no test ran"); process.exit(1); }
  ' "$report" || status=1
fi
exit "$status"
