/**
 * One point of a sweep (a concurrency or a request rate), measured the perf_analyzer way: start the
 * load, let it warm up, then take consecutive windows of --measurement-interval until the last three
 * are stable (stability.ts) or --max-trials windows have run; the reported point merges the last three
 * windows, and the server breakdown is the statistics delta over exactly those three.
 *
 * Errors do not stop the run (perf_analyzer's do); they are counted, overall and per tier, and the
 * first one is kept for the report.
 */
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { arrivalGaps } from '../lib/load/arrival-gaps.js';
import { startClosedLoad } from '../lib/load/closed-loop.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { mergeWindows, sleep, type LoadWindow, type RunningLoad } from '../lib/load/load-window.js';
import type { LoadPoint } from '../lib/load/load-point.js';
import { statsDelta, type ModelStatsSnapshot, type StatsDelta } from '../lib/sampling/node-stats.js';
import { startOpenLoad } from '../lib/load/open-loop.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { STABILITY_WINDOWS, isStable, type WindowFigures } from '../lib/load/stability.js';

export interface TierFigures {
  readonly tier: string;
  readonly completed: number;
  readonly errors: number;
  readonly requestsPerSec: number;
  /** Successes within the latency SLO (all successes without one), per second. */
  readonly goodputPerSec: number;
  readonly latency: LatencySummary;
}

export interface WindowSummary extends WindowFigures {
  readonly windowS: number;
  readonly completed: number;
  readonly errors: number;
  readonly dropped: number;
  readonly p99Us: number;
}

export interface PerfPoint extends LoadPoint {
  readonly mode: 'concurrency' | 'rate';
  readonly stable: boolean;
  readonly trials: number;
  /** Open loop: requests sent and intended sends dropped at the outstanding cap, over the reported windows. */
  readonly sent: number;
  readonly dropped: number;
  readonly goodputPerSec: number;
  readonly tiers: readonly TierFigures[];
  readonly windows: readonly WindowSummary[];
}

export interface PointPlan {
  readonly mode: 'concurrency' | 'rate';
  /** The concurrency, or the request rate. */
  readonly value: number;
  readonly distribution: 'constant' | 'poisson';
  readonly maxOutstanding: number;
  readonly seed: number;
  readonly warmupMs: number;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  readonly latencySloMs?: number;
}

export interface PointContext {
  readonly model: string;
  readonly protocol: 'http' | 'grpc';
  /** The label of the run ("http-binary", "grpc", ...), the CSV's Setup column. */
  readonly setup: string;
  readonly tags: readonly string[];
  readonly requests: readonly InferRequest[];
  readonly createClients: (connections: number) => InferClient[];
  /** Undefined when the statistics API is not available. */
  readonly readStats?: () => Promise<ModelStatsSnapshot>;
  readonly onTrial?: (trial: number, window: WindowSummary) => void;
}

export const NO_SERVER_STATS: StatsDelta = {
  requests: 0,
  failures: 0,
  inferences: 0,
  executions: 0,
  avgBatchSize: Number.NaN,
  requestUs: Number.NaN,
  queueUs: Number.NaN,
  computeInputUs: Number.NaN,
  computeInferUs: Number.NaN,
  computeOutputUs: Number.NaN,
};

function summarizeWindow(w: LoadWindow): WindowSummary {
  const latency = summarizeLatencies(w.latenciesUs);
  return {
    windowS: w.windowS,
    completed: w.latenciesUs.length,
    errors: w.errors,
    dropped: w.dropped,
    inferencesPerSec: w.latenciesUs.length / w.windowS,
    latencyUs: latency.avgUs,
    p99Us: latency.p99Us,
  };
}

/** Per-tier figures of merged windows; goodput counts successes within `sloMs` when given. */
export function tierFigures(w: LoadWindow, tags: readonly string[], sloMs: number | undefined): TierFigures[] {
  return tags.map((tier, t) => {
    const mine = w.latenciesUs.filter((_, i) => w.latencyTags[i] === t);
    const good = sloMs === undefined ? mine.length : mine.filter((us) => us <= sloMs * 1000).length;
    return {
      tier,
      completed: mine.length,
      errors: w.errorsByTag[t] ?? 0,
      requestsPerSec: mine.length / w.windowS,
      goodputPerSec: good / w.windowS,
      latency: summarizeLatencies(mine),
    };
  });
}

export async function measurePoint(plan: PointPlan, ctx: PointContext): Promise<PerfPoint> {
  const connections = plan.mode === 'concurrency' ? plan.value : plan.maxOutstanding;
  const clients = ctx.createClients(connections);
  const call = async (seq: number) => {
    const client = clients[seq % clients.length] as InferClient;
    return client.infer(ctx.requests[Math.floor(seq / clients.length) % ctx.requests.length] as InferRequest);
  };
  const tags = ctx.tags.length;
  const load: RunningLoad =
    plan.mode === 'concurrency'
      ? startClosedLoad({ concurrency: plan.value, call, tags })
      : startOpenLoad({ nextGapMs: arrivalGaps(plan.distribution, plan.value, plan.seed), maxOutstanding: plan.maxOutstanding, call, tags });

  const windows: LoadWindow[] = [];
  const summaries: WindowSummary[] = [];
  // snapshots[k] is read before window k's start (k = 0) or at window k-1's end.
  const snapshots: (ModelStatsSnapshot | undefined)[] = [];
  const read = async (): Promise<ModelStatsSnapshot | undefined> => (ctx.readStats ? ctx.readStats() : undefined);
  let stable = false;
  try {
    await sleep(plan.warmupMs);
    for (let trial = 1; trial <= plan.maxTrials && !stable; trial++) {
      const window = await load.measure(plan.measurementIntervalMs, {
        onWindowStart: async () => void (trial === 1 && snapshots.push(await read())),
        onWindowEnd: async () => void snapshots.push(await read()),
      });
      windows.push(window);
      summaries.push(summarizeWindow(window));
      stable = isStable(summaries, plan.stabilityPercentage);
      ctx.onTrial?.(trial, summaries[summaries.length - 1] as WindowSummary);
    }
  } finally {
    await load.stop();
    await Promise.all(clients.map((c) => c.close()));
  }

  const reported = windows.slice(-STABILITY_WINDOWS);
  const merged = mergeWindows(reported);
  const before = snapshots[snapshots.length - 1 - reported.length];
  const after = snapshots[snapshots.length - 1];
  const server = before !== undefined && after !== undefined ? statsDelta(before, after) : NO_SERVER_STATS;
  const completed = merged.latenciesUs.length;
  const firstError = load.firstError();
  const tiers = tierFigures(merged, ctx.tags, plan.latencySloMs);
  return {
    model: ctx.model,
    protocol: ctx.protocol,
    setup: ctx.setup,
    mode: plan.mode,
    concurrency: connections,
    ...(plan.mode === 'rate' ? { requestRate: plan.value } : {}),
    inferencesPerSec: completed / merged.windowS,
    latency: summarizeLatencies(merged.latenciesUs),
    clientSendUs: completed > 0 ? merged.sendUsTotal / completed : 0,
    clientRecvUs: completed > 0 ? merged.recvUsTotal / completed : 0,
    errors: merged.errors,
    ...(firstError !== undefined && merged.errors > 0 ? { firstError } : {}),
    windowS: merged.windowS,
    server,
    stable,
    trials: windows.length,
    sent: merged.sent,
    dropped: merged.dropped,
    goodputPerSec: tiers.reduce((a, t) => a + t.goodputPerSec, 0),
    tiers,
    windows: summaries,
  };
}
