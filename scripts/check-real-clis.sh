#!/usr/bin/env bash
# Opt-in check of the provider presets against the real agent CLIs (not run in CI: it downloads
# them from npm). Installs @anthropic-ai/claude-code, @openai/codex, @google/gemini-cli and
# opencode-ai (latest, or the package specs given as arguments) into a scratch prefix, then runs
# scripts/check-real-clis.mjs on the compiled presets (dist/): every flag a preset may pass must
# appear in that CLI's help. Exits non-zero when one is missing.
#
#   scripts/check-real-clis.sh                       # latest of the four
#   scripts/check-real-clis.sh @openai/codex@0.50.0  # only these packages
#   KEEP=1 scripts/check-real-clis.sh                # keep the scratch prefix (help texts saved there)
#   WITH_AIDER=1 scripts/check-real-clis.sh          # also aider-chat from PyPI, in a venv (large)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=("$@")
if [ "${#packages[@]}" -eq 0 ]; then
  packages=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vigil-real-clis.XXXXXX")"
cleanup() {
  if [ "${KEEP:-0}" = "1" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# The compiled presets: rebuild when missing or older than their sources.
probe_js="$root/dist/lib/providers/probe.js"
if [ ! -f "$probe_js" ] || [ -n "$(find "$root/activities/providers" -name '*.ts' -newer "$probe_js" -print -quit)" ]; then
  echo "building dist/ ..."
  (cd "$root" && npm run --silent build) || echo "warning: the build reported errors; using what it emitted" >&2
fi
[ -f "$probe_js" ] || { echo "no $probe_js: run npm run build" >&2; exit 2; }

echo "installing ${packages[*]} into $tmp ..."
npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "${packages[@]}" >"$tmp/npm-install.log" 2>&1 || {
  cat "$tmp/npm-install.log" >&2
  exit 2
}

bins=("$tmp/node_modules/.bin")
if [ "${WITH_AIDER:-0}" = "1" ]; then
  echo "installing aider-chat into $tmp/aider-venv ..."
  python3 -m venv "$tmp/aider-venv"
  "$tmp/aider-venv/bin/pip" install --quiet --disable-pip-version-check aider-chat >"$tmp/pip-install.log" 2>&1 || {
    cat "$tmp/pip-install.log" >&2
    exit 2
  }
  bins+=("$tmp/aider-venv/bin")
fi

# A HOME of its own, so first runs of the CLIs write nothing into the real one.
mkdir -p "$tmp/home"
HOME="$tmp/home" node "$root/scripts/check-real-clis.mjs" --out "$tmp" "${bins[@]}"
