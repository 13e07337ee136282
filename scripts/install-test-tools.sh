#!/usr/bin/env bash
# Installs the pinned tools Vigil's worker uses to select affected tests, into a cache outside any
# repository (the tests gate finds them there; nothing goes into the repository under test or its
# environment):
#   ${VIGIL_TEST_TOOLS_DIR:-${XDG_CACHE_HOME:-~/.cache}/vigil/test-tools}/coverage-<version>/lib
# coverage.py records pytest's per-test map (lib/gates/pytest-map.ts), installed with the
# machine's python3 (`pip install --target`; its C tracer is built for that python, another one
# falls back to coverage's Python tracer). A finished install is stamped (.installed) and skipped
# next time; a broken one is redone. Prints each tool's folder, one a line. Without it, pytest's
# tests are selected by their imports alone (the tests gate's line says so).
#
#   scripts/install-test-tools.sh
set -euo pipefail
cache="${VIGIL_TEST_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vigil/test-tools}"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

# Keep in step with COVERAGE_VERSION in lib/gates/pytest-map.ts.
for pin in coverage==7.17.3; do
  dir="$cache/${pin/==/-}"
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "installing $pin into $dir ..." >&2
    if ! python3 -m pip install --disable-pip-version-check --no-input --no-compile --target "$dir/lib" "$pin" >"$dir/install.log" 2>&1; then
      echo "install-test-tools: $pin failed; see $dir/install.log (needs python3 with pip)" >&2
      exit 1
    fi
    python3 --version >"$dir/.installed"
  fi
  echo "$dir/lib"
done
