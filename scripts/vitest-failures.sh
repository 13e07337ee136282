#!/usr/bin/env bash
# vitest-failures.sh LOG: what failed in a vitest run's output, for the last lines CI keeps.
# Each failed test's line (vitest marks it × or ✗), each failure's whole message (to the line
# that points into the source, at most 24 lines: an assertion's own message comes first and its
# "expected … to be …" last, so its first line alone hides which expectation failed), and each
# unhandled error or rejection with its stack and the file it came from (it fails the run although
# every test passed). Colour codes removed; at most 160 lines.
set -uo pipefail
sed -e 's/\x1b\[[0-9;]*m//g' "$1" | awk '
  /could not be installed/ { print; next }
  /^ *(×|✗)/ { print; next }
  /^ *FAIL / { block = 24; print; next }
  /⎯ Unhandled (Error|Rejection)/ { block = 24; print; next }
  /This error originated in|The latest test that might/ { print; next }
  block > 0 && /❯ / { print; block = 0; next }
  block > 0 && !/^ *⎯+ *$/ && NF > 0 { print; block-- }
' | head -n 160 | sed 's/^/      /'
