# syntax=docker/dockerfile:1
# The gateway. Build from the repository root: docker build -f infra/docker/gateway.Dockerfile -t tessera/gateway .
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The production bundle (scripts/build.mjs): every command and worker entry, no tsx at run time.
COPY scripts ./scripts
COPY shared ./shared
COPY gpu-node ./gpu-node
COPY gateway ./gateway
COPY loadtests/src ./loadtests/src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# One package for all parts, so onnxruntime-node comes along; its CPU build is enough (never loaded here).
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
# Run-time dependencies only: the bundle leaves out onnxruntime-node (native) and tsx (TypeScript model files).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# Every config field is optional, so "{}" starts a gateway on defaults; deployments mount their own
# file over it (a compose bind mount, a Kubernetes ConfigMap).
RUN groupadd --gid 10001 tessera \
 && useradd --uid 10001 --gid tessera --no-create-home --shell /usr/sbin/nologin tessera \
 && mkdir -p /etc/tessera && echo '{}' > /etc/tessera/gateway.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "http://127.0.0.1:8080/v2/health/ready"]
# The young generation held at 32 MiB per semi-space: V8 otherwise sizes it down to a few MiB at low
# request rates, and a scavenge then lands in 1-3% of requests (the gateway's own p99 at c=1, docs/benchmarks.md).
ENTRYPOINT ["node", "--min-semi-space-size=32", "--max-semi-space-size=32", "bin/tessera-gateway.js"]
CMD ["--config", "/etc/tessera/gateway.json", "--port", "8080"]
