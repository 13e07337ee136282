#!/usr/bin/env bash
# Installs the browser the console's browser tests drive (tests/e2e/console.test.ts): Debian's
# `chromium` package, through apt, when /usr/bin/chromium is missing (CI runs as root on Debian).
# playwright-core (a pinned dev dependency) drives it; nothing downloads a browser build of its own.
# Safe to run again: it does nothing when the browser is there. VIGIL_CHROMIUM names another binary.
set -euo pipefail
browser="${VIGIL_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$browser" ]; then
  exit 0
fi
if [ -n "${VIGIL_CHROMIUM:-}" ]; then
  echo "install-browser: VIGIL_CHROMIUM=$browser is not an executable file" >&2
  exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: no /usr/bin/chromium and no apt-get here; install Chromium and set VIGIL_CHROMIUM to its binary" >&2
  exit 2
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-browser: installing chromium needs root (apt-get install chromium); run it as root or set VIGIL_CHROMIUM" >&2; exit 2; }
  sudo="sudo"
fi
echo "install-browser: installing Debian's chromium (apt-get install chromium)"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
[ -x /usr/bin/chromium ] || { echo "install-browser: apt-get installed chromium but /usr/bin/chromium is missing" >&2; exit 2; }
echo "install-browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
