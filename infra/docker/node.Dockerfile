# syntax=docker/dockerfile:1
# The node agent on CPU. Build from the repository root (the context every Dockerfile here expects):
#   docker build -f infra/docker/node.Dockerfile -t tessera/node .
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
# Keep onnxruntime-node's bundled CPU binaries: the CUDA download belongs to the GPU image only.
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
# Run-time dependencies only: the bundle leaves out onnxruntime-node (native) and tsx (TypeScript model files).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# A fixed numeric uid, so Kubernetes' runAsNonRoot can verify it; /models is created here with that
# owner so an empty named volume mounted on it inherits a writable owner.
RUN groupadd --gid 10001 tessera \
 && useradd --uid 10001 --gid tessera --no-create-home --shell /usr/sbin/nologin tessera \
 && mkdir /models && chown tessera:tessera /models
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER 10001:10001
# KServe HTTP, gRPC, Prometheus metrics: Triton's ports.
EXPOSE 8000 8001 8002
# Ready means every model loaded; start-period covers model loading.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "http://127.0.0.1:8000/v2/health/ready"]
ENTRYPOINT ["node", "bin/tessera-node.js"]
CMD ["--model-repository", "/models"]
