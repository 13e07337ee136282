#!/usr/bin/env bash
# Builds the agent sandbox's network bridge as a small static program (native/sandbox-bridge/, Go's
# standard library only) into this checkout's .tools/sandbox-bridge/ (docs/security.md, The
# network): a sandboxed call then starts it instead of a Node process (~0.07 CPU-s less per call).
# Uses the Go on PATH as it is (GOTOOLCHAIN=local: never a downloaded toolchain; GOPROXY=off: no
# module is fetched; GOWORK=off and GOFLAGS=: no workspace or flags of the user's; the language
# version is go.mod's), and needs Go 1.21 or later. Safe to run again: it builds only when the
# sources are newer than the binary. It never fails the caller: without Go the Node bridge runs,
# as before, and `vigil doctor` says so. An installed package has no scripts: `vigil setup` builds
# the same way into VIGIL_HOME/tools (workers/sandbox-bridge-setup.ts, BRIDGE_BUILD_ENV).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

src=native/sandbox-bridge
out=.tools/sandbox-bridge/sandbox-bridge
if ! command -v go >/dev/null 2>&1; then
  echo "build-sandbox-bridge: Go is not on PATH; sandboxed calls use the Node bridge (install Go 1.21 or later and run this again)" >&2
  exit 0
fi
if [ -x "$out" ] && [ -z "$(find "$src" -newer "$out" -type f 2>/dev/null)" ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
if (cd "$src" && CGO_ENABLED=0 GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GOWORK=off go build -trimpath -ldflags='-s -w' -o "../../$tmp" .); then
  mv -f "$tmp" "$out"
  echo "build-sandbox-bridge: built $out with $(go env GOVERSION)"
else
  rm -f "$tmp"
  echo "build-sandbox-bridge: the build failed with $(go env GOVERSION 2>/dev/null || echo 'this Go') (Go 1.21 or later is needed); sandboxed calls use the Node bridge" >&2
fi
exit 0
