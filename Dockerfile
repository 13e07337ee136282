# The Vigil image: a worker by default, any `vigil` command otherwise.
#
#   docker build -t vigil .
#   docker build -t vigil --build-arg AGENT_PACKAGES="@anthropic-ai/claude-code @openai/codex" .
#   docker run --rm -e TEMPORAL_ADDRESS=temporal.internal:7233 -v /srv/repos:/repos vigil
#   docker run --rm -e TEMPORAL_ADDRESS=temporal.internal:7233 vigil status <id>
#
# docker-compose.yml builds it for its vigil-worker service (docs/team-deployment.md).
#
# Build stage: the locked dependencies, TypeScript compiled to dist/, then the dev dependencies
# dropped so node_modules/ holds only what runs.
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Runtime stage.
FROM node:20.20.2-bookworm-slim

# git: Vigil inspects the repository with it after every iteration, and agents commit with it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# Agent CLIs are not part of the image: name the npm packages of the ones your runs use, e.g.
#   --build-arg AGENT_PACKAGES="@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai"
# (docker-compose.yml passes VIGIL_AGENT_PACKAGES). Their credentials come from the environment
# at run time, never from the image.
ARG AGENT_PACKAGES=""
RUN if [ -n "$AGENT_PACKAGES" ]; then \
      npm install -g --no-audit --no-fund $AGENT_PACKAGES && npm cache clean --force; \
    fi

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
# there for all workers, since any worker may run any step of a run.
ENV NODE_ENV=production \
    VIGIL_HOME=/var/lib/vigil

WORKDIR /app
# Owned by root: the worker and its agents can read Vigil's code but not change it.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/examples ./examples
COPY deploy/worker-healthcheck.mjs ./deploy/worker-healthcheck.mjs
RUN ln -s /app/bin/vigil.js /usr/local/bin/vigil

USER node

HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
  CMD ["node", "deploy/worker-healthcheck.mjs"]

ENTRYPOINT ["node", "bin/vigil.js"]
CMD ["worker"]
