# The Vigil image: a worker by default, any `vigil` command otherwise.
#
#   docker build -t vigil .
#   docker build -t vigil --build-arg AGENT_CLIS="claude codex" .
#   docker run --rm -e TEMPORAL_ADDRESS=temporal.internal:7233 -v /srv/repos:/repos vigil
#   docker run --rm -e TEMPORAL_ADDRESS=temporal.internal:7233 vigil status <id>
#
# docker-compose.yml builds it for its vigil-worker service (docs/team-deployment.md).
#
# The base image is pinned by digest (the multi-platform index of the tag): a rebuild gets the
# same bytes. To move it, resolve the new tag's digest and replace both lines
# (docs/team-deployment.md#images-by-digest):
#   docker buildx imagetools inspect node:20.X.Y-bookworm-slim --format '{{json .Manifest.Digest}}'
#
# Build stage: the locked dependencies, TypeScript compiled to dist/, then the dev dependencies
# dropped so node_modules/ holds only what runs.
FROM node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0 AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Runtime stage.
FROM node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0

# git: Vigil inspects the repository with it after every iteration, and agents commit with it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# Agent CLIs: only those named in AGENT_CLIS (claude codex gemini opencode aider), each at the
# version of its argument below. The defaults are the versions of scripts/real-clis.pins, the
# ones the real-CLI suite runs Vigil against (tests/unit/deploy.test.ts keeps them equal): bump
# them there and here together. docker-compose.yml passes VIGIL_AGENT_CLIS. Their credentials
# come from the environment at run time, never from the image.
ARG AGENT_CLIS=""
ARG CLAUDE_CODE_VERSION=2.1.332
ARG CODEX_VERSION=0.171.0
ARG GEMINI_CLI_VERSION=0.61.0
ARG OPENCODE_VERSION=1.18.33
ARG AIDER_VERSION=0.86.2
COPY deploy/install-agent-clis.sh /tmp/install-agent-clis.sh
RUN AGENT_CLIS="$AGENT_CLIS" CLAUDE_CODE_VERSION="$CLAUDE_CODE_VERSION" CODEX_VERSION="$CODEX_VERSION" \
      GEMINI_CLI_VERSION="$GEMINI_CLI_VERSION" OPENCODE_VERSION="$OPENCODE_VERSION" AIDER_VERSION="$AIDER_VERSION" \
      sh /tmp/install-agent-clis.sh \
 && rm /tmp/install-agent-clis.sh

# The worker runs as the image's unprivileged `node` user. Give it the uid/gid that owns the
# repositories mounted at /repos, so that it (and git) may work in them.
ARG VIGIL_UID=1000
ARG VIGIL_GID=1000
RUN if [ "$VIGIL_GID" != 1000 ]; then groupmod -o -g "$VIGIL_GID" node; fi \
 && if [ "$VIGIL_UID" != 1000 ]; then usermod -o -u "$VIGIL_UID" -g "$VIGIL_GID" node; fi \
 && mkdir -p /var/lib/vigil /repos \
 && chown node:node /var/lib/vigil /repos \
 && chmod 700 /var/lib/vigil

# VIGIL_HOME holds the run secret and runs' private files: docker-compose.yml mounts one volume
# there for all workers, since any worker may run any step of a run. A worker serves its metrics,
# /healthz and /readyz on 9464 (the health check reads /readyz).
ENV NODE_ENV=production \
    VIGIL_HOME=/var/lib/vigil \
    VIGIL_METRICS_BIND=0.0.0.0:9464

WORKDIR /app
# Owned by root: the worker and its agents can read Vigil's code but not change it.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/examples ./examples
COPY deploy/worker-healthcheck.mjs ./deploy/worker-healthcheck.mjs
COPY deploy/docker-entrypoint.sh ./deploy/docker-entrypoint.sh
COPY deploy/lib/secrets.sh ./deploy/lib/secrets.sh
RUN ln -s /app/bin/vigil.js /usr/local/bin/vigil

USER node

EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["node", "deploy/worker-healthcheck.mjs"]

# `node bin/vigil.js "$@"`, after reading the secrets given as files (deploy/docker-entrypoint.sh).
ENTRYPOINT ["/app/deploy/docker-entrypoint.sh"]
CMD ["worker"]
