// The node's Prometheus endpoint (port 8002): Triton's nv_* families plus process metrics.
export { createMetricsServer, DEFAULT_METRICS_PORT, EVENT_LOOP_SAMPLE_MS } from './metrics-server.js';
export type { MetricsServer, MetricsServerOptions } from './metrics-server.js';
export type { MetricsSource } from './model-metrics.js';
export { parseNvidiaSmiQuery, NVIDIA_SMI_ARGS } from './gpu-metrics.js';
export type { GpuQuery, GpuSample } from './gpu-metrics.js';
export { parseMeminfo } from './cpu-metrics.js';
