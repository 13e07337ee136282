#!/usr/bin/env bash
# Installs the pinned test runners the affected-tests suite drives that this project does not
# depend on itself (jest), into a cache outside the repository:
#   ${VIGIL_TEST_RUNNERS_DIR:-${XDG_CACHE_HOME:-~/.cache}/vigil/test-runners}/<package>-<version>/node_modules
# with `npm install --prefix`. A finished install is stamped (.installed) and skipped next time; a
# broken one is redone. Prints the node_modules folder of each runner, one a line.
#
#   scripts/install-test-runners.sh
set -euo pipefail
cache="${VIGIL_TEST_RUNNERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vigil/test-runners}"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

for pin in jest@29.7.0; do
  dir="$cache/${pin/@/-}"
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "installing $pin into $dir ..." >&2
    if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$pin" >"$dir/install.log" 2>&1; then
      echo "install-test-runners: $pin failed; see $dir/install.log" >&2
      exit 1
    fi
    date -u +%FT%TZ >"$dir/.installed"
  fi
  echo "$dir/node_modules"
done
