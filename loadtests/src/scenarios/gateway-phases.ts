/**
 * The four measurements of `npm run bench -- gateway` (gateway.ts runs them in this order):
 *
 * 1. Added latency: `simple` at a fixed rate (open loop, constant gaps), straight to node 1's HTTP
 *    port, then through the gateway (premium key, `Cache-Control: no-store` so every request goes
 *    upstream over gRPC). Same client, same rate; latency from the intended send time.
 * 2. Cache-hit throughput: the same `simple` request through the gateway once (MISS, stored), then
 *    flooded (http-flood.ts) with every answer checked for `x-cache: HIT`; against `GET /` of a bare
 *    Hono hello-world on the same stack (@hono/node-server), same threads and connections.
 * 3. Overload: `steady` on nodes 1-2. Capacity is measured (closed loop through the gateway, far more
 *    callers than node slots); premium alone at 2/3 of it gives premium's baseline; then premium,
 *    standard and free together at twice capacity, a third each (open loop, Poisson arrivals).
 * 4. Routing: `work` on four nodes, node 4 three times slower, at a fixed share of the fleet's nominal
 *    capacity, through the p2c gateway and then the round-robin one.
 */
import { encodeInferRequestBody } from '../../../shared/src/kserve/index.js';
import type { InferRequest, Tensor } from '../../../shared/src/tensors/index.js';
import { arrivalGaps, type RequestDistribution } from '../lib/load/arrival-gaps.js';
import { startClosedLoad } from '../lib/load/closed-loop.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import { runHttpFlood, type HttpFloodOptions, type HttpFloodResult } from '../lib/clients/http-flood.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sleep, type LoadWindow, type RunningLoad } from '../lib/load/load-window.js';
import { startOpenLoad } from '../lib/load/open-loop.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { cpuUsPerRequest, processCpuSeconds } from '../lib/sampling/proc-cpu.js';
import { scrapeMetrics, selectSamples, type PromSample } from '../lib/sampling/prom-text.js';
import { SLEEP_ELEMENTS, SLEEP_INPUT } from '../lib/processes/sleep-model.js';
import {
  SIMPLE_MODEL,
  STEADY_MODEL,
  TIERS,
  WORK_MODEL,
  startReplayServer,
  type Fleet,
  type FleetShape,
  type ReplayAnswer,
  type RoutingPolicy,
  type TierName,
} from './gateway-fleet.js';

export interface PhaseTiming {
  readonly warmupS: number;
  readonly durationS: number;
}

const HOST = '127.0.0.1';
/** Cap on requests outstanding per open-loop load (and sockets per client). */
const MAX_OUTSTANDING = 1024;

function int32Tensor(name: string, elements: number): Tensor {
  const values = Int32Array.from({ length: elements }, (_, i) => i);
  return { name, datatype: 'INT32', shape: [1, elements], data: new Uint8Array(values.buffer) };
}

export const simpleRequest = (): InferRequest => ({
  id: '',
  modelName: SIMPLE_MODEL,
  inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)],
  parameters: {},
});

export const sleepRequest = (model: string): InferRequest => ({
  id: '',
  modelName: model,
  inputs: [{ name: SLEEP_INPUT, datatype: 'FP32', shape: [SLEEP_ELEMENTS], data: new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer) }],
  parameters: {},
});

/** One checked infer: a wrong answer must fail, not be benchmarked. */
async function inferChecked(client: InferClient, request: InferRequest, outputBytes: number) {
  const result = await client.infer(request);
  const bytes = result.response.outputs[0]?.data.length;
  if (bytes !== outputBytes) throw new Error(`expected ${outputBytes} output bytes, got ${bytes}`);
  return result;
}

const authHeaders = (key: string, extra: Record<string, string> = {}): Record<string, string> => ({ authorization: `Bearer ${key}`, ...extra });

/** Warm-up, one window, stop (waiting for the requests in flight). */
async function measureOnce(load: RunningLoad, timing: PhaseTiming, hooks: Parameters<RunningLoad['measure']>[1] = {}): Promise<LoadWindow> {
  try {
    await sleep(timing.warmupS * 1000);
    return await load.measure(timing.durationS * 1000, hooks);
  } finally {
    await load.stop();
  }
}

export interface OpenPoint {
  readonly ratePerSec: number;
  readonly completedPerSec: number;
  readonly latency: LatencySummary;
  readonly errors: number;
  readonly dropped: number;
  readonly firstError?: string;
  /** CPU of the server process per request answered in the window (µs), when one was watched. */
  readonly serverCpuUsPerRequest?: number;
}

function openPoint(ratePerSec: number, window: LoadWindow, firstError: string | undefined): OpenPoint {
  return {
    ratePerSec,
    completedPerSec: window.latenciesUs.length / window.windowS,
    latency: summarizeLatencies(window.latenciesUs),
    errors: window.errors,
    dropped: window.dropped,
    ...(window.errors > 0 && firstError !== undefined ? { firstError } : {}),
  };
}

async function openLoadPoint(
  client: InferClient,
  request: InferRequest,
  outputBytes: number,
  ratePerSec: number,
  distribution: RequestDistribution,
  timing: PhaseTiming,
  serverPid: number,
): Promise<OpenPoint> {
  const load = startOpenLoad({
    nextGapMs: arrivalGaps(distribution, ratePerSec),
    maxOutstanding: MAX_OUTSTANDING,
    call: () => inferChecked(client, request, outputBytes),
  });
  let cpuBefore = Number.NaN;
  let cpuAfter = Number.NaN;
  const window = await measureOnce(load, timing, {
    onWindowStart: async () => void (cpuBefore = await processCpuSeconds(serverPid)),
    onWindowEnd: async () => void (cpuAfter = await processCpuSeconds(serverPid)),
  });
  const point = openPoint(ratePerSec, window, load.firstError());
  return { ...point, serverCpuUsPerRequest: cpuUsPerRequest(cpuBefore, cpuAfter, window.latenciesUs.length + window.errors) };
}

// ---------------------------------------------------------------------------------------------- 1

export interface AddedLatencyResult {
  readonly ratePerSec: number;
  readonly direct: OpenPoint;
  readonly gateway: OpenPoint;
  readonly addedP50Us: number;
  readonly addedP99Us: number;
}

export async function measureAddedLatency(fleet: Fleet, ratePerSec: number, timing: PhaseTiming): Promise<AddedLatencyResult> {
  const node = fleet.nodes[0]!;
  const direct = createHttpInferClient(HOST, node.httpPort, MAX_OUTSTANDING);
  const viaGateway = createHttpInferClient(HOST, fleet.gateways.p2c.port, MAX_OUTSTANDING, {
    headers: authHeaders(fleet.keys.premium, { 'cache-control': 'no-store' }),
  });
  try {
    const directPoint = await openLoadPoint(direct, simpleRequest(), 64, ratePerSec, 'constant', timing, node.pid);
    const gatewayPoint = await openLoadPoint(viaGateway, simpleRequest(), 64, ratePerSec, 'constant', timing, fleet.gateways.p2c.pid);
    return {
      ratePerSec,
      direct: directPoint,
      gateway: gatewayPoint,
      addedP50Us: gatewayPoint.latency.p50Us - directPoint.latency.p50Us,
      addedP99Us: gatewayPoint.latency.p99Us - directPoint.latency.p99Us,
    };
  } finally {
    await direct.close();
    await viaGateway.close();
  }
}

// ---------------------------------------------------------------------------------------------- 2

export interface FloodPoint extends HttpFloodResult {
  /** CPU of the server process per answered request over (about) the window, µs. */
  readonly serverCpuUsPerRequest: number;
}

export interface CacheThroughputResult {
  readonly threads: number;
  readonly connectionsPerThread: number;
  readonly bareHono: FloodPoint;
  /** node:http replaying the gateway's cached answer: the floor of a cache hit on node:http (no target). */
  readonly nodeHttpReplay: FloodPoint;
  readonly cacheHit: FloodPoint;
  readonly ratio: number;
}

/** The answer's headers as a server would set them: without those node:http writes itself. */
function replayableHeaders(headers: Headers): Record<string, string> {
  const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!own.has(name)) out[name] = value;
  });
  return out;
}

/** A flood, with the server's CPU read on this thread's timers at the workers' window edges (± a few ms). */
async function floodWithCpu(options: HttpFloodOptions, serverPid: number): Promise<FloodPoint> {
  const cpu = (async () => {
    await sleep(options.warmupMs);
    const before = await processCpuSeconds(serverPid);
    await sleep(options.measureMs);
    return { before, after: await processCpuSeconds(serverPid) };
  })();
  const result = await runHttpFlood(options);
  const { before, after } = await cpu;
  const answered = result.completed + result.mismatched + result.errors;
  return { ...result, serverCpuUsPerRequest: cpuUsPerRequest(before, after, answered) };
}

export async function measureCacheThroughput(
  fleet: Fleet,
  flood: { threads: number; connections: number },
  timing: PhaseTiming,
): Promise<CacheThroughputResult> {
  const gatewayPort = fleet.gateways.p2c.port;
  // Fill the cache (and check that the entry is served) with the exact bytes the flood will send.
  const encoded = encodeInferRequestBody(simpleRequest(), { binaryInputs: true, binaryDataOutput: true });
  const headers = authHeaders(fleet.keys.premium, encoded.headers);
  const url = `http://${HOST}:${gatewayPort}/v2/models/${SIMPLE_MODEL}/infer`;
  let state = '';
  let hit: ReplayAnswer | undefined;
  for (let attempt = 0; attempt < 20 && state !== 'HIT'; attempt++) {
    const response = await fetch(url, { method: 'POST', headers, body: encoded.body });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`priming the cache: HTTP ${response.status}`);
    state = response.headers.get('x-cache') ?? '';
    hit = { status: response.status, headers: replayableHeaders(response.headers), body };
  }
  if (state !== 'HIT' || hit === undefined) throw new Error(`the gateway does not answer ${SIMPLE_MODEL} from its cache (x-cache: ${state})`);

  const common = { host: HOST, threads: flood.threads, connections: flood.connections, warmupMs: timing.warmupS * 1000, measureMs: timing.durationS * 1000 };
  const bareHono = await floodWithCpu({ ...common, port: fleet.hono.port, method: 'GET', path: '/' }, fleet.hono.pid);
  const replay = await startReplayServer(fleet.work, hit);
  let nodeHttpReplay: FloodPoint;
  try {
    nodeHttpReplay = await floodWithCpu({ ...common, port: replay.port, method: 'POST', path: `/v2/models/${SIMPLE_MODEL}/infer`, headers, body: encoded.body }, replay.pid);
  } finally {
    await replay.stop();
  }
  const cacheHit = await floodWithCpu({
    ...common,
    port: gatewayPort,
    method: 'POST',
    path: `/v2/models/${SIMPLE_MODEL}/infer`,
    headers,
    body: encoded.body,
    expectHeader: { name: 'x-cache', value: 'HIT' },
  }, fleet.gateways.p2c.pid);
  return {
    threads: flood.threads,
    connectionsPerThread: flood.connections,
    bareHono,
    nodeHttpReplay,
    cacheHit,
    ratio: cacheHit.requestsPerSec / bareHono.requestsPerSec,
  };
}

// ---------------------------------------------------------------------------------------------- 3

/** How a failed request ended, from the gateway's answer. */
export type FailureKind = 'rejected' | 'expired' | 'evicted' | 'timeout' | 'other';

/** Admission refusals at the door are `rejected`; `expired`/`evicted` waited in the queue first. */
export function classifyFailure(error: unknown): FailureKind {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'UNAVAILABLE') {
    if (message.includes('until its deadline')) return 'expired';
    if (message.includes('evicted')) return 'evicted';
    return 'rejected';
  }
  if (code === 'DEADLINE_EXCEEDED') return 'timeout';
  return 'other';
}

export interface TierFigures {
  readonly tier: TierName;
  readonly offeredPerSec: number;
  /** Actually sent in the window (below `offeredPerSec` when the generator fell behind or dropped). */
  readonly sentPerSec: number;
  /** Answered in the window, successes and failures. */
  readonly completedPerSec: number;
  readonly goodputPerSec: number;
  /** Successful requests, from the intended send time. */
  readonly latency: LatencySummary;
  /** Immediate admission refusals: send → 503. */
  readonly rejected: LatencySummary;
  readonly failures: Readonly<Record<FailureKind, number>>;
  readonly firstOtherError?: string;
}

export interface TierLoadResult {
  readonly totalRatePerSec: number;
  readonly windowS: number;
  readonly dropped: number;
  readonly tiers: readonly TierFigures[];
  /** Immediate admission refusals of all tiers together: send → 503. */
  readonly rejectedAll: LatencySummary;
  /** The gateway's `tessera_gateway_admission_rejections_total` increase over the window, by tier and reason. */
  readonly gatewayRejections: Readonly<Record<string, number>>;
}

function admissionRejections(samples: readonly PromSample[], model: string): Map<string, number> {
  const counts = new Map<string, number>();
  // Queues are per model version: the label is `steady@1` when requests name no version.
  for (const s of selectSamples(samples, 'tessera_gateway_admission_rejections_total')) {
    if (s.labels.model !== model && !s.labels.model?.startsWith(`${model}@`)) continue;
    const key = `${s.labels.tier}/${s.labels.reason}`;
    counts.set(key, (counts.get(key) ?? 0) + s.value);
  }
  return counts;
}

/**
 * Open-loop Poisson load at `totalRatePerSec`, request i sent with tier `tiers[i % tiers.length]`'s
 * key, so every tier is offered an equal share. Failures are timed from the actual send.
 */
async function tierLoad(
  fleet: Fleet,
  model: string,
  tiers: readonly TierName[],
  totalRatePerSec: number,
  timing: PhaseTiming,
): Promise<TierLoadResult> {
  const clients = tiers.map((tier) =>
    createHttpInferClient(HOST, fleet.gateways.p2c.port, MAX_OUTSTANDING, { headers: authHeaders(fleet.keys[tier]) }),
  );
  const request = sleepRequest(model);
  let measuring = false;
  const sentByTag = tiers.map(() => 0);
  const failures = tiers.map(() => ({ rejected: [] as number[], expired: 0, evicted: 0, timeout: 0, other: 0, firstOther: undefined as string | undefined }));
  const metricsUrl = `http://${HOST}:${fleet.gateways.p2c.port}/metrics`;
  let before = new Map<string, number>();
  let after = new Map<string, number>();
  const load = startOpenLoad({
    nextGapMs: arrivalGaps('poisson', totalRatePerSec, 7),
    maxOutstanding: MAX_OUTSTANDING,
    tags: tiers.length,
    call: async (seq) => {
      const tag = seq % tiers.length;
      if (measuring) sentByTag[tag] = (sentByTag[tag] ?? 0) + 1;
      const t0 = performance.now();
      try {
        return await inferChecked(clients[tag]!, request, SLEEP_ELEMENTS * 4);
      } catch (error) {
        if (measuring) {
          const f = failures[tag]!;
          const kind = classifyFailure(error);
          if (kind === 'rejected') f.rejected.push((performance.now() - t0) * 1000);
          else if (kind === 'other') {
            f.other += 1;
            f.firstOther ??= error instanceof Error ? error.message : String(error);
          } else f[kind] += 1;
        }
        throw error;
      }
    },
  });
  try {
    const window = await measureOnce(load, timing, {
      onWindowStart: async () => {
        before = admissionRejections(await scrapeMetrics(metricsUrl), model);
        measuring = true;
      },
      onWindowEnd: async () => {
        measuring = false;
        after = admissionRejections(await scrapeMetrics(metricsUrl), model);
      },
    });
    const perTier = tiers.map((tier, tag): TierFigures => {
      const latencies = window.latenciesUs.filter((_, i) => window.latencyTags[i] === tag);
      const f = failures[tag]!;
      const errors = window.errorsByTag[tag] ?? 0;
      return {
        tier,
        offeredPerSec: totalRatePerSec / tiers.length,
        sentPerSec: (sentByTag[tag] ?? 0) / window.windowS,
        completedPerSec: (latencies.length + errors) / window.windowS,
        goodputPerSec: latencies.length / window.windowS,
        latency: summarizeLatencies(latencies),
        rejected: summarizeLatencies(f.rejected),
        failures: { rejected: f.rejected.length, expired: f.expired, evicted: f.evicted, timeout: f.timeout, other: f.other },
        ...(f.firstOther !== undefined ? { firstOtherError: f.firstOther } : {}),
      };
    });
    const gatewayRejections: Record<string, number> = {};
    for (const [key, value] of after) {
      const delta = value - (before.get(key) ?? 0);
      if (delta > 0) gatewayRejections[key] = delta;
    }
    const rejectedAll = summarizeLatencies(failures.flatMap((f) => f.rejected));
    return { totalRatePerSec, windowS: window.windowS, dropped: window.dropped, tiers: perTier, rejectedAll, gatewayRejections };
  } finally {
    for (const client of clients) await client.close();
  }
}

export interface OverloadResult {
  readonly model: string;
  /** Nominal: instances / service time, summed over the model's nodes. */
  readonly nominalCapacityPerSec: number;
  /** Measured: closed loop through the gateway with `capacityCallers` premium callers. */
  readonly capacityPerSec: number;
  readonly capacityCallers: number;
  readonly capacityErrors: number;
  readonly premiumAlone: TierLoadResult;
  readonly overload: TierLoadResult;
  readonly serviceMs: number;
}

export async function measureOverload(fleet: Fleet, shape: FleetShape, timing: PhaseTiming, overloadWarmupS: number): Promise<OverloadResult> {
  const nodes = 2;
  const nominalCapacityPerSec = (nodes * shape.steadyInstances * 1000) / shape.serviceMs;
  // Four callers per instance: every node slot (instances × 2 with the default overcommit) stays full
  // and the gateway queue is never empty, so this is the fleet's throughput, not the callers'.
  const capacityCallers = nodes * shape.steadyInstances * 4;
  const client = createHttpInferClient(HOST, fleet.gateways.p2c.port, capacityCallers, { headers: authHeaders(fleet.keys.premium) });
  const request = sleepRequest(STEADY_MODEL);
  let capacity: LoadWindow;
  let capacityError: string | undefined;
  try {
    const load = startClosedLoad({ concurrency: capacityCallers, call: () => inferChecked(client, request, SLEEP_ELEMENTS * 4) });
    capacity = await measureOnce(load, timing);
    capacityError = load.firstError();
  } finally {
    await client.close();
  }
  const capacityPerSec = capacity.latenciesUs.length / capacity.windowS;
  if (!(capacityPerSec > 0)) throw new Error(`capacity measurement of '${STEADY_MODEL}' completed nothing (${capacityError ?? 'no error'})`);

  const premiumAlone = await tierLoad(fleet, STEADY_MODEL, ['premium'], (capacityPerSec * 2) / 3, timing);
  const overload = await tierLoad(fleet, STEADY_MODEL, TIERS, capacityPerSec * 2, { ...timing, warmupS: overloadWarmupS });
  return {
    model: STEADY_MODEL,
    nominalCapacityPerSec,
    capacityPerSec,
    capacityCallers,
    capacityErrors: capacity.errors,
    premiumAlone,
    overload,
    serviceMs: shape.serviceMs,
  };
}

// ---------------------------------------------------------------------------------------------- 4

export interface RoutingPoint extends OpenPoint {
  readonly policy: RoutingPolicy;
  /** Upstream calls per node over the window, from the gateway's own histogram counts. */
  readonly perNode: Readonly<Record<string, number>>;
}

export interface RoutingResult {
  readonly model: string;
  readonly nominalCapacityPerSec: number;
  readonly loadFactor: number;
  readonly ratePerSec: number;
  readonly points: readonly RoutingPoint[];
}

function upstreamCounts(samples: readonly PromSample[], model: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of selectSamples(samples, 'tessera_gateway_upstream_duration_seconds_count', { model })) {
    const node = s.labels.node ?? '?';
    counts.set(node, (counts.get(node) ?? 0) + s.value);
  }
  return counts;
}

export async function measureRouting(fleet: Fleet, shape: FleetShape, loadFactor: number, timing: PhaseTiming): Promise<RoutingResult> {
  const perNodeRate = (ms: number): number => (shape.workInstances * 1000) / ms;
  const nominalCapacityPerSec = 3 * perNodeRate(shape.serviceMs) + perNodeRate(shape.serviceMs * shape.slowFactor);
  const ratePerSec = nominalCapacityPerSec * loadFactor;
  const points: RoutingPoint[] = [];
  for (const policy of ['p2c', 'round-robin'] as const) {
    const port = fleet.gateways[policy].port;
    const client = createHttpInferClient(HOST, port, MAX_OUTSTANDING, { headers: authHeaders(fleet.keys.premium) });
    const metricsUrl = `http://${HOST}:${port}/metrics`;
    let before = new Map<string, number>();
    let after = new Map<string, number>();
    try {
      const request = sleepRequest(WORK_MODEL);
      const load = startOpenLoad({
        nextGapMs: arrivalGaps('poisson', ratePerSec, 11),
        maxOutstanding: MAX_OUTSTANDING,
        call: () => inferChecked(client, request, SLEEP_ELEMENTS * 4),
      });
      const window = await measureOnce(load, timing, {
        onWindowStart: async () => void (before = upstreamCounts(await scrapeMetrics(metricsUrl), WORK_MODEL)),
        onWindowEnd: async () => void (after = upstreamCounts(await scrapeMetrics(metricsUrl), WORK_MODEL)),
      });
      const perNode: Record<string, number> = {};
      for (const [node, count] of [...after].sort(([a], [b]) => a.localeCompare(b))) perNode[node] = count - (before.get(node) ?? 0);
      points.push({ policy, ...openPoint(ratePerSec, window, load.firstError()), perNode });
    } finally {
      await client.close();
    }
  }
  return { model: WORK_MODEL, nominalCapacityPerSec, loadFactor, ratePerSec, points };
}
