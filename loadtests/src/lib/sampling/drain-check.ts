/**
 * "No in-flight counter left behind": once the load has stopped and every request has been answered,
 * every count of outstanding work must fall back to 0. A counter that stays above 0 is a leak (a
 * release missed on some error path) and would skew routing for as long as the process lives.
 *
 * What is read, over the wire:
 * - the gateway's `tessera_gateway_queue_depth{model}` (requests waiting in its admission queues);
 * - each node's `nv_inference_pending_request_count{model,version}` (accepted, not yet executing);
 * - each node's latest load report in Redis: `queued + inflight` over its models (what the gateways
 *   route on; written about once a second, so it lags).
 * The gateway's own per-node in-flight count (`localInflight` in its node directory) is not exported
 * as a metric, so it cannot be read from outside; the JSON says so.
 *
 * Counters are polled until all read 0 or `timeoutMs` passes: the reports, and requests the gateway
 * is still cancelling upstream, take a moment to settle.
 */
import { Redis } from 'ioredis';
import { fleetKeys, parseLoadReport, type LoadReport } from '../../../../shared/src/fleet/index.js';
import { sleep } from '../load/load-window.js';
import { scrapeMetrics, selectSamples, type PromSample } from './prom-text.js';

export const GATEWAY_QUEUE_DEPTH = 'tessera_gateway_queue_depth';
export const NODE_PENDING = 'nv_inference_pending_request_count';

export interface LeftoverReading {
  /** Sum of the gateway's queue depth gauges; NaN when the scrape failed. */
  readonly gatewayQueued: number;
  /** Per node id: sum of its pending-request gauges; NaN when the scrape failed. */
  readonly nodePending: Readonly<Record<string, number>>;
  /** Per node id: queued + inflight of its latest load report; NaN when there is none. */
  readonly nodeReported: Readonly<Record<string, number>>;
}

export const sumOf = (samples: readonly PromSample[], name: string): number => selectSamples(samples, name).reduce((a, s) => a + s.value, 0);

export function reportedOutstanding(report: Pick<LoadReport, 'models'>): number {
  return report.models.reduce((a, m) => a + m.queued + m.inflight, 0);
}

/** Everything left over; NaN (a reading that failed) counts as not drained. */
export function leftoverTotal(r: LeftoverReading): number {
  return [r.gatewayQueued, ...Object.values(r.nodePending), ...Object.values(r.nodeReported)].reduce((a, v) => a + v, 0);
}

export interface DrainTargets {
  readonly gatewayMetricsUrl: string;
  /** Node id → its metrics URL (the nodes still alive). */
  readonly nodeMetricsUrls: Readonly<Record<string, string>>;
  /** Redis holding the load reports; undefined skips them. */
  readonly redisUrl?: string;
}

async function safely(read: () => Promise<number>): Promise<number> {
  try {
    return await read();
  } catch {
    return Number.NaN;
  }
}

export async function readLeftovers(targets: DrainTargets, redis: Redis | undefined): Promise<LeftoverReading> {
  const keys = fleetKeys();
  const ids = Object.keys(targets.nodeMetricsUrls);
  const gatewayQueued = await safely(async () => sumOf(await scrapeMetrics(targets.gatewayMetricsUrl), GATEWAY_QUEUE_DEPTH));
  const nodePending: Record<string, number> = {};
  const nodeReported: Record<string, number> = {};
  for (const id of ids) {
    nodePending[id] = await safely(async () => sumOf(await scrapeMetrics(targets.nodeMetricsUrls[id] as string), NODE_PENDING));
    if (redis !== undefined) {
      nodeReported[id] = await safely(async () => {
        const text = await redis.get(keys.nodeKey(id));
        return text === null ? Number.NaN : reportedOutstanding(parseLoadReport(text));
      });
    }
  }
  return { gatewayQueued, nodePending, nodeReported };
}

export interface DrainResult {
  readonly drained: boolean;
  /** ms from the first reading until all were 0 (or until giving up). */
  readonly afterMs: number;
  readonly first: LeftoverReading;
  readonly last: LeftoverReading;
}

/** Polls every `intervalMs` (default 250) until everything reads 0, for at most `timeoutMs` (default 15000). */
export async function waitForDrain(targets: DrainTargets, timeoutMs = 15_000, intervalMs = 250): Promise<DrainResult> {
  // Fail fast rather than queue commands forever if Redis is not there.
  const redis = targets.redisUrl !== undefined ? new Redis(targets.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
  redis?.on('error', () => undefined);
  const t0 = performance.now();
  try {
    await redis?.connect().catch(() => undefined);
    const first = await readLeftovers(targets, redis);
    let last = first;
    while (leftoverTotal(last) !== 0 && performance.now() - t0 < timeoutMs) {
      await sleep(intervalMs);
      last = await readLeftovers(targets, redis);
    }
    return { drained: leftoverTotal(last) === 0, afterMs: performance.now() - t0, first, last };
  } finally {
    redis?.disconnect();
  }
}
