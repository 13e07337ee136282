#!/usr/bin/env bash
# Builds the Temporal server and its SQL schema tool, at the version of the compose deployment's
# image (temporalio/server in docker-compose.yml), from the Go module proxy into a cache outside
# the repository, for the cluster suite (npm run test:cluster, tests/cluster/). The module is
# downloaded with `go mod download` and built in its own folder, where its go.mod and go.sum apply;
# the module cache is read-only, so `go build -o` writes into the cache. A cache whose binaries
# answer with this version is kept as it is.
#
#   bash scripts/install-temporal-server.sh        # prints the cache folder on its last line
#
# The cache folder: VIGIL_TEMPORAL_SERVER_DIR, default ~/.cache/vigil/temporal-server-<version>.
# It holds temporal-server, temporal-sql-tool and schema/postgresql/v12 (the versioned schemas).
# Needs Go (the version the module's go.mod names, or newer) and the Go module proxy; a cold build
# takes a few minutes on two cores.
set -euo pipefail

version=1.32.0
cache=${VIGIL_TEMPORAL_SERVER_DIR:-${HOME}/.cache/vigil/temporal-server-${version}}

log() { echo "install-temporal-server: $*" >&2; }
fail() { log "$*"; exit 1; }

answers() {
  [ -x "$cache/temporal-server" ] && [ -x "$cache/temporal-sql-tool" ] &&
    [ -d "$cache/schema/postgresql/v12/temporal/versioned" ] &&
    [ -d "$cache/schema/postgresql/v12/visibility/versioned" ] &&
    "$cache/temporal-server" --version 2>/dev/null | grep -q "$version" &&
    "$cache/temporal-sql-tool" --version >/dev/null 2>&1
}

# One build at a time: .ci/run starts this early, in the background, and the cluster step runs it
# again; the second waits for the first (and then finds the binaries built) instead of building
# them twice at once.
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
if ! flock -n 9; then
  log "another build of temporal-server $version is under way; waiting for it"
  flock 9
fi
if answers; then
  log "temporal-server $version already built in $cache"
  echo "$cache"
  exit 0
fi

command -v go >/dev/null 2>&1 ||
  fail "go is not installed: install Go 1.21 or newer (https://go.dev/doc/install, or Debian's golang-go), which fetches the toolchain go.temporal.io/server v$version asks for from the module proxy itself, and run this again"

# The module's own go.mod decides the toolchain; the build cache goes where Go puts it.
export GOFLAGS=-buildvcs=false
module_json=$(go mod download -json "go.temporal.io/server@v${version}" 2>&1) ||
  fail "could not download go.temporal.io/server@v${version} from the Go module proxy ($(go env GOPROXY)): ${module_json}
Check that the proxy is reachable (or set GOPROXY to one that is), then run this again."
dir=$(printf '%s\n' "$module_json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -n "$dir" ] && [ -f "$dir/go.mod" ] ||
  fail "go mod download gave no module folder for go.temporal.io/server@v${version}: ${module_json}"

mkdir -p "$cache"
staging=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT

log "building temporal-server $version in $dir (a few minutes on two cores)"
started=$SECONDS
(cd "$dir" && go build -o "$staging/temporal-server" ./cmd/server) ||
  fail "go build ./cmd/server failed in $dir (see above); if go says the module needs a newer Go, install that version and run this again"
(cd "$dir" && go build -o "$staging/temporal-sql-tool" ./cmd/tools/sql) ||
  fail "go build ./cmd/tools/sql failed in $dir (see above)"
mkdir -p "$staging/schema/postgresql"
cp -R "$dir/schema/postgresql/v12" "$staging/schema/postgresql/"
chmod -R u+w "$staging/schema"
log "built in $((SECONDS - started)) s"

rm -rf "$cache/schema"
mv "$staging/schema" "$cache/schema"
mv -f "$staging/temporal-sql-tool" "$cache/temporal-sql-tool"
mv -f "$staging/temporal-server" "$cache/temporal-server"

answers || fail "the binaries built in $cache do not answer --version with $version: $("$cache/temporal-server" --version 2>&1 || true)"
log "temporal-server $version ready in $cache"
echo "$cache"
