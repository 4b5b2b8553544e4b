# syntax=docker/dockerfile:1
# The node agent on NVIDIA GPUs: onnxruntime-node with its CUDA 12 execution provider on a CUDA runtime.
# Build from the repository root: docker build -f infra/docker/node-gpu.Dockerfile -t tessera/node-gpu .
ARG NODE_IMAGE=node:20-bookworm-slim
# onnxruntime 1.2x/1.3x CUDA 12 builds need cuDNN 9, which the 12.6 cudnn-runtime images carry.
ARG CUDA_IMAGE=nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04

FROM ${NODE_IMAGE} AS node

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Not skip, as the CPU images and CI say: the postinstall script downloads the CUDA 12 execution
# provider libraries into node_modules/onnxruntime-node.
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
COPY package.json package-lock.json ./
# The whole tree, dev included: tsx is a devDependency, yet bin/ launchers load it at run time.
RUN npm ci --no-audit --no-fund && npm cache clean --force

FROM ${CUDA_IMAGE}
# Node 20 from the official image: one binary, no package repository to reach at build time.
COPY --from=node /usr/local/bin/node /usr/local/bin/node
# compute for CUDA, utility for nvidia-smi, which the node reads for the nv_gpu_* metrics.
ENV NODE_ENV=production \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /app
RUN groupadd --gid 10001 tessera \
 && useradd --uid 10001 --gid tessera --no-create-home --shell /usr/sbin/nologin tessera \
 && mkdir /models && chown tessera:tessera /models
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY shared ./shared
COPY gpu-node ./gpu-node
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER 10001:10001
EXPOSE 8000 8001 8002
# GPU models take longer to load (CUDA context, cuDNN autotuning): a longer start period.
HEALTHCHECK --interval=10s --timeout=3s --start-period=180s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "http://127.0.0.1:8000/v2/health/ready"]
ENTRYPOINT ["node", "bin/tessera-node.js"]
CMD ["--model-repository", "/models"]
