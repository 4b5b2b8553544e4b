# syntax=docker/dockerfile:1
# The node agent on NVIDIA GPUs: onnxruntime-node with its CUDA 12 execution provider on a CUDA runtime
# (and the Vulkan loader for its bundled WebGPU provider).
# Build from the repository root: docker build -f infra/docker/node-gpu.Dockerfile -t tessera/node-gpu .
ARG NODE_IMAGE=node:20-bookworm-slim
# onnxruntime 1.2x/1.3x CUDA 12 builds need cuDNN 9, which the 12.6 cudnn-runtime images carry.
ARG CUDA_IMAGE=nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04

FROM ${NODE_IMAGE} AS node

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
# Not skip, as the CPU images and CI say: the postinstall script downloads the CUDA 12 execution
# provider libraries into node_modules/onnxruntime-node.
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
COPY package.json package-lock.json ./
# Run-time dependencies only: the bundle leaves out onnxruntime-node (native) and tsx (TypeScript model files).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${CUDA_IMAGE}
# Node 20 from the official image: one binary, no package repository to reach at build time.
COPY --from=node /usr/local/bin/node /usr/local/bin/node
# compute for CUDA, utility for nvidia-smi (the nv_gpu_* metrics), graphics for Vulkan, on which
# onnxruntime's bundled WebGPU provider runs when the CUDA provider cannot load.
ENV NODE_ENV=production \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics
WORKDIR /app
# The Vulkan loader: the NVIDIA container runtime mounts the driver's Vulkan ICD, not the loader.
RUN apt-get update && apt-get install -y --no-install-recommends libvulkan1 && rm -rf /var/lib/apt/lists/*
RUN groupadd --gid 10001 tessera \
 && useradd --uid 10001 --gid tessera --no-create-home --shell /usr/sbin/nologin tessera \
 && mkdir /models && chown tessera:tessera /models
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER 10001:10001
EXPOSE 8000 8001 8002
# GPU models take longer to load (CUDA context, cuDNN autotuning): a longer start period.
HEALTHCHECK --interval=10s --timeout=3s --start-period=180s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "http://127.0.0.1:8000/v2/health/ready"]
ENTRYPOINT ["node", "bin/tessera-node.js"]
CMD ["--model-repository", "/models"]
