#!/bin/sh
# Installs the agent CLIs named in AGENT_CLIS (space-separated: claude codex gemini opencode
# aider) into the Vigil image, each at the version of its build argument. The Dockerfile's
# defaults of those arguments are the versions of scripts/real-clis.pins, the ones the real-CLI
# suite runs Vigil against (tests/unit/deploy.test.ts keeps them equal); nothing is installed at
# "latest". Credentials come from the environment at run time, never from the image.
set -eu

for cli in ${AGENT_CLIS:-}; do
  case "$cli" in
    claude) npm install -g --no-audit --no-fund "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION:?}" ;;
    codex) npm install -g --no-audit --no-fund "@openai/codex@${CODEX_VERSION:?}" ;;
    gemini) npm install -g --no-audit --no-fund "@google/gemini-cli@${GEMINI_CLI_VERSION:?}" ;;
    opencode) npm install -g --no-audit --no-fund "opencode-ai@${OPENCODE_VERSION:?}" ;;
    aider)
      apt-get update
      apt-get install -y --no-install-recommends python3 python3-venv
      rm -rf /var/lib/apt/lists/*
      python3 -m venv /opt/aider
      /opt/aider/bin/pip install --no-cache-dir "aider-chat==${AIDER_VERSION:?}"
      ln -s /opt/aider/bin/aider /usr/local/bin/aider
      ;;
    *)
      echo "install-agent-clis: unknown agent CLI \"$cli\" in AGENT_CLIS; known: claude codex gemini opencode aider" >&2
      exit 1
      ;;
  esac
done
npm cache clean --force >/dev/null 2>&1 || true
