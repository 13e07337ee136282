#!/usr/bin/env bash
# Installs what the agent sandbox needs (docs/security.md, The agent's sandbox): bubblewrap, from
# the system's package manager when it is missing. Safe to run again. It never fails the caller:
# without bubblewrap Vigil still runs (sandbox=auto runs agents unsandboxed and says so;
# sandbox=strict refuses), so this only says clearly what is missing and how to get it.
set -uo pipefail

if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi
if [ "$(uname -s)" != "Linux" ]; then
  echo "install-sandbox: the agent sandbox needs Linux (bubblewrap); on $(uname -s) agents run unsandboxed (vigil doctor says so)" >&2
  exit 0
fi
sudo_cmd=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo_cmd="sudo -n"; fi
fi
if [ "$(id -u)" != "0" ] && [ -z "$sudo_cmd" ]; then
  echo "install-sandbox: bubblewrap is not installed and this user cannot install packages; ask an administrator to install it (Debian/Ubuntu: apt-get install bubblewrap, Fedora: dnf install bubblewrap). Until then agents run unsandboxed (sandbox=auto) or not at all (sandbox=strict)." >&2
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  echo "install-sandbox: installing bubblewrap (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get install -y -q --no-install-recommends bubblewrap >/dev/null 2>&1 \
    || { $sudo_cmd apt-get update -q >/dev/null 2>&1 && $sudo_cmd apt-get install -y -q --no-install-recommends bubblewrap >/dev/null; }
elif command -v dnf >/dev/null 2>&1; then
  echo "install-sandbox: installing bubblewrap (dnf)"
  $sudo_cmd dnf install -y -q bubblewrap
elif command -v apk >/dev/null 2>&1; then
  echo "install-sandbox: installing bubblewrap (apk)"
  $sudo_cmd apk add -q bubblewrap
elif command -v pacman >/dev/null 2>&1; then
  echo "install-sandbox: installing bubblewrap (pacman)"
  $sudo_cmd pacman -S --noconfirm --needed bubblewrap
fi
if command -v bwrap >/dev/null 2>&1; then
  echo "install-sandbox: bubblewrap $(bwrap --version 2>/dev/null | awk '{print $2}') installed"
else
  echo "install-sandbox: bubblewrap could not be installed (no known package manager, or it failed above); install the package 'bubblewrap' by hand. Until then agents run unsandboxed (sandbox=auto) or not at all (sandbox=strict)." >&2
fi
exit 0
