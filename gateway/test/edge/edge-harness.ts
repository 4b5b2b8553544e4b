/**
 * Test support for the edge build: the Worker (src/entry-workers.ts) in the REAL workerd runtime
 * through wrangler's `unstable_dev` (local KV and Durable Objects, nothing persisted, offline), and
 * load reports as nodes (or a Node gateway) would push them.
 */
import { fileURLToPath } from 'node:url';
import { unstable_dev } from 'wrangler';
import { LOAD_REPORT_VERSION, type LoadReport, type ModelLoad } from '../../../shared/src/fleet/index.js';

const GATEWAY_DIR = fileURLToPath(new URL('../../', import.meta.url));

export interface EdgeWorker {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts the Worker with wrangler.toml plus these vars (secrets included) on a free loopback port. */
export async function startEdgeWorker(vars: Record<string, string>): Promise<EdgeWorker> {
  const worker = await unstable_dev(`${GATEWAY_DIR}src/entry-workers.ts`, {
    config: `${GATEWAY_DIR}wrangler.toml`,
    vars,
    ip: '127.0.0.1',
    persist: false,
    logLevel: 'error',
    // No file watching: an edit elsewhere in the tree would restart workerd mid-request. No dev
    // registry: two suites' Workers of the same name must not share Durable Objects.
    experimental: { disableExperimentalWarning: true, watch: false, disableDevRegistry: true },
  });
  return { url: `http://127.0.0.1:${worker.port}`, stop: () => worker.stop() };
}

let seq = 0;

/** A fresh report (new seq each call) for a node on loopback, with a long TTL so tests never race staleness. */
export function loadReport(nodeId: string, httpPort: number, models: readonly Partial<ModelLoad>[], startedAt = 1): LoadReport {
  return {
    version: LOAD_REPORT_VERSION,
    nodeId,
    httpAddress: `127.0.0.1:${httpPort}`,
    grpcAddress: null,
    startedAt,
    sentAt: Date.now(),
    seq: ++seq,
    ttlMs: 600_000,
    models: models.map((m) => ({ name: 'simple', versions: ['1'], queued: 0, inflight: 0, capacity: 8, execTimeEmaMs: null, ...m })),
    draining: false,
  };
}
