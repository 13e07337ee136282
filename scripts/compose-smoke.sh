#!/usr/bin/env bash
# Smoke test of the compose deployment (docker-compose.yml, docs/team-deployment.md): builds the
# image, brings the whole stack up with freshly made secrets, checks that a default password is
# refused, runs the demo scenario (examples/demo: the scripted agent, the product's default knobs
# as `vigil demo` sets them) through the deployment's own worker until it completes, checks the
# worker's /readyz and Vigil metrics, and tears everything down (volumes included), whatever
# happened. Its own project name, secrets, repositories and published ports: a deployment already
# running on this host is left alone.
#
#   bash scripts/compose-smoke.sh          # the plain variant
#   bash scripts/compose-smoke.sh --tls    # with docker-compose.tls.yml (mTLS, codec key)
#
# Needs a Docker engine and the compose plugin (v2.24 or newer: env_file `required`, --wait).
# Where there is none it says so and exits 77 (skipped) without doing anything.
set -euo pipefail

log() { echo "compose-smoke: $*" >&2; }
skip() { log "skipped: $*"; exit 77; }

tls=false
[ "${1:-}" = "--tls" ] && tls=true

command -v docker >/dev/null 2>&1 || skip "no docker command on this machine; install Docker Engine and its compose plugin, then run this again"
docker info >/dev/null 2>&1 || skip "no Docker engine answers here ($(docker context show 2>/dev/null || echo 'no context')); start one (or point DOCKER_HOST at one), then run this again"
docker compose version >/dev/null 2>&1 || skip "the docker compose plugin is missing; install it (https://docs.docker.com/compose/install/), then run this again"

root=$(cd "$(dirname "$0")/.." && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-compose-smoke.XXXXXX")
project="vigil-smoke-$$"
files=(-f "$root/docker-compose.yml")
$tls && files+=(-f "$root/docker-compose.tls.yml")
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

export VIGIL_SECRETS_DIR="$work/secrets" VIGIL_TLS_DIR="$work/secrets/tls" VIGIL_REPOS="$work/repos"
export VIGIL_PUBLISH_IP=127.0.0.1 VIGIL_TEMPORAL_PORT VIGIL_UI_PORT VIGIL_UID VIGIL_GID
VIGIL_TEMPORAL_PORT=$(free_port)
VIGIL_UI_PORT=$(free_port)
VIGIL_UID=$(id -u)
VIGIL_GID=$(id -g)
compose() { docker compose -p "$project" --project-directory "$root" "${files[@]}" "$@"; }

cleanup() {
  status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    log "failed (exit $status); the services' last log lines:"
    compose logs --tail 40 >&2 || true
  fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

log "secrets in $VIGIL_SECRETS_DIR"
if $tls; then sh "$root/deploy/make-secrets.sh" --tls "$VIGIL_SECRETS_DIR" >&2; else sh "$root/deploy/make-secrets.sh" "$VIGIL_SECRETS_DIR" >&2; fi

# A default password is refused before Postgres starts.
mkdir -p "$work/bad"
printf 'temporal\n' > "$work/bad/postgres_password"
cp "$VIGIL_SECRETS_DIR/vigil_db_password" "$work/bad/"
if out=$(VIGIL_SECRETS_DIR="$work/bad" docker compose -p "$project-bad" --project-directory "$root" -f "$root/docker-compose.yml" run --rm --no-deps postgres 2>&1); then
  log "Postgres started with the default password \"temporal\": it must refuse"
  exit 1
fi
grep -q 'refusing to start' <<<"$out" || { log "Postgres failed, but not with the refusal: $out"; exit 1; }
docker compose -p "$project-bad" --project-directory "$root" -f "$root/docker-compose.yml" down -v >/dev/null 2>&1 || true
log "a default password is refused"

# The demo's sample repository, where the workers see it.
mkdir -p "$VIGIL_REPOS"
cp -R "$root/examples/demo/sample-repo" "$VIGIL_REPOS/demo"
cp "$root/examples/demo/PRD.md" "$VIGIL_REPOS/demo/PRD.md"
git -C "$VIGIL_REPOS/demo" init -q -b main
git -C "$VIGIL_REPOS/demo" add -A
git -C "$VIGIL_REPOS/demo" -c user.name='Vigil Smoke' -c user.email=smoke@vigil.invalid -c commit.gpgsign=false commit -q -m 'Sample project'

log "building and starting the stack (project $project)"
compose up -d --build --wait --wait-timeout 900

log "the worker is ready:"
compose exec -T vigil-worker node deploy/worker-healthcheck.mjs >&2

log "running the demo scenario through the deployment"
compose run --rm -T vigil-worker start /repos/demo/PRD.md --repo /repos/demo --host compose --id vigil-compose-smoke \
  --agent-command "/app/examples/agents/scripted-agent/scripted-agent --scenario /app/examples/demo/scenario.json" \
  --set testCommand='node --test' --set maxIterations=12 --set councilMinIterations=2 --set baseWaitSeconds=2 --set backoffJitterSeconds=0 \
  --wait

log "the worker's metrics after the run:"
metrics=$(compose exec -T vigil-worker node -e "fetch('http://127.0.0.1:9464/metrics').then(r=>r.text()).then(t=>process.stdout.write(t))")
for series in 'vigil_iterations_total{outcome="succeeded"}' 'vigil_council_rounds_total{result="APPROVED"' 'vigil_agent_call_duration_seconds_count{provider="command",role="iteration"}' 'vigil_runs{status=' 'temporal_activity_execution_latency'; do
  grep -qF "$series" <<<"$metrics" || { log "no $series in the worker's metrics"; exit 1; }
  log "  $series ok"
done

log "passed; tearing down"
