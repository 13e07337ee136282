#!/usr/bin/env bash
# The real-CLI suite (npm run test:real-clis): installs the pinned agent CLIs
# (scripts/install-real-clis.sh; quick when cached), builds dist/ when the sources are newer (the
# agent supervisor runs compiled), then runs tests/real-clis against a Temporal dev server and the
# local model server. Arguments go to vitest (e.g. tests/real-clis/claude.spec.ts).
# Exits non-zero when a pinned CLI could not be installed, even if the others passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

install_status=0
bash scripts/install-real-clis.sh || install_status=$?

daemon=dist/lib/supervisor-daemon.js
if [ ! -f "$daemon" ] || [ -n "$(find activities workflows schemas workers -name '*.ts' -newer "$daemon" -print -quit)" ]; then
  echo "test-real-clis: building dist/"
  npm run --silent build || echo "test-real-clis: warning: the build reported errors; using what it emitted" >&2
fi
[ -f "$daemon" ] || { echo "test-real-clis: no $daemon: run npm run build" >&2; exit 2; }

status=0
npx --no-install vitest run --config tests/real-clis/vitest.config.ts "$@" || status=$?
if [ "$install_status" -ne 0 ]; then
  echo "test-real-clis: some pinned CLIs could not be installed (their tests were skipped)" >&2
  [ "$status" -eq 0 ] && status=1
fi
exit "$status"
