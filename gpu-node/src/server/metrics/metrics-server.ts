/**
 * The node's Prometheus endpoint (Triton's port 8002): GET /metrics (and /metrics/) in the Prometheus
 * text format 0.0.4, the format Triton serves. Everything else is 404.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { registerCpuMetrics } from './cpu-metrics.js';
import { gpuMetrics } from './gpu-metrics.js';
import type { GpuQuery } from './gpu-metrics.js';
import { registerInstanceMetrics } from './instance-metrics.js';
import { registerModelMetrics } from './model-metrics.js';
import type { MetricsSource } from './model-metrics.js';
import { applyServerTimeouts } from '../../../../shared/src/http/index.js';

export const DEFAULT_METRICS_PORT = 8002;

/**
 * How often the event-loop lag is sampled for nodejs_eventloop_lag_*. prom-client's default (10 ms) is a
 * native timer that wakes an idle node 100 times a second; ten samples a second still give the lag
 * percentiles hundreds of samples per scrape (the gateway made the same cut, docs/benchmarks.md, 2026-11-26f).
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

export interface MetricsServerOptions {
  /** Registry to serve; default a fresh one (so tests and several nodes in one process don't collide). */
  readonly registry?: Registry;
  /** GPU families (default true, like Triton's --allow-gpu-metrics). */
  readonly gpuMetrics?: boolean;
  /** CPU families (default true, like --allow-cpu-metrics). */
  readonly cpuMetrics?: boolean;
  /** prom-client's process_* and nodejs_* families (default true). */
  readonly processMetrics?: boolean;
  /** How often nvidia-smi may run (default 2000 ms, Triton's --metrics-interval-ms). */
  readonly intervalMs?: number;
  /** Replaces the nvidia-smi call; for tests. */
  readonly gpuQuery?: GpuQuery;
}

export interface MetricsServer {
  readonly registry: Registry;
  /** The exposition text, as GET /metrics would answer it now. */
  scrape(): Promise<string>;
  listen(port?: number, host?: string): Promise<{ port: number }>;
  /** Stops listening; open keep-alive connections are closed after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

const METRICS_PATHS = new Set(['/metrics', '/metrics/']);

export function createMetricsServer(source: MetricsSource, options: MetricsServerOptions = {}): MetricsServer {
  const registry = options.registry ?? new Registry();
  registerModelMetrics(registry, source);
  const instanceSnapshots = source.instanceSnapshots;
  if (instanceSnapshots !== undefined) registerInstanceMetrics(registry, () => instanceSnapshots.call(source));
  if (options.cpuMetrics ?? true) registerCpuMetrics(registry);
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const gpu = (options.gpuMetrics ?? true) ? gpuMetrics(registry, options.gpuQuery, options.intervalMs) : undefined;

  const scrape = async (): Promise<string> => {
    await gpu?.refresh();
    return registry.metrics();
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!METRICS_PATHS.has(path)) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method Not Allowed\n');
      return;
    }
    scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        // A failing collector must not take the endpoint down; Prometheus records the scrape as failed.
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`metrics collection failed: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  };

  const server = applyServerTimeouts(createServer(handle));

  return {
    registry,
    scrape,
    listen(port = DEFAULT_METRICS_PORT, host = '0.0.0.0') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve({ port: (server.address() as AddressInfo).port });
        });
      });
    },
    close(graceMs = 5_000) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.closeIdleConnections();
        // Also called (with ERR_SERVER_NOT_RUNNING) when it never listened: closing twice is fine.
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
