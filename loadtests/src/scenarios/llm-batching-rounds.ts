/**
 * llm-batching's four target figures measured in rounds, so each rests on enough samples and the box's drift
 * falls on every setup alike: throughput rounds (continuous batching at the top concurrency, one sequence at a
 * time, whole-request batches) and TTFT rounds (probes on an idle node, beside 31 long generations in waves,
 * and staggered), the setups' order reversed every other round. Each ratio comes with its per-round values
 * and a bootstrap 90% interval (bootstrap.ts: probes, seconds or batches drawn again within their window).
 */
import { bootstrapInterval, p99Ratio, rateRatio, type Interval } from '../lib/sampling/bootstrap.js';
import type { RunningNode } from '../lib/processes/node-process.js';
import { percentile } from '../lib/sampling/percentiles.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { closedLoop, probes, windowFigures, type StreamRecord } from './llm-stream-client.js';
import { measure, measureWholeBatches, type Measured } from './llm-batching-windows.js';

export interface RoundModels {
  readonly continuous: string;
  readonly oneAtATime: string;
  /** The whole-request baselines' twin (prefill grouped as before the group cap). */
  readonly whole: string;
  /** The continuous model under prefill_order arrival. */
  readonly arrival: string;
}

export interface RoundSettings {
  readonly warmupS: number;
  readonly durationS: number;
  /** Streams of the throughput setups (32); the TTFT windows run one less in the background. */
  readonly top: number;
  /** Also the shrinking baseline and the arrival-order TTFT windows (the full bench, not the figures alone). */
  readonly extras: boolean;
  /** A drawn pause before each probe (LLM_PROBE_GAP_MS). */
  readonly probeGapMs: number;
  /** Whole batches per round of each whole-request setup (even: mirrored pairs). */
  readonly staticBatches: number;
  /** The measured part of each continuous round at the top concurrency, s (longer than durationS: the figure's numerator). */
  readonly continuousWindowS: number;
}

export interface ThroughputRounds {
  readonly continuous: Measured[];
  readonly oneAtATime: Measured[];
  readonly static: Measured[];
  readonly shrinking: Measured[];
}

/** Setups in `order`, reversed on odd rounds (ABC CBA ...), so a drift in the box's load falls on each alike. */
function inTurns<T>(rounds: number, order: readonly T[]): T[][] {
  return Array.from({ length: rounds }, (_, r) => (r % 2 === 0 ? [...order] : [...order].reverse()));
}

export async function throughputRounds(node: RunningNode, models: RoundModels, settings: RoundSettings, rounds: number): Promise<ThroughputRounds> {
  const out: ThroughputRounds = { continuous: [], oneAtATime: [], static: [], shrinking: [] };
  const window = { warmupS: settings.warmupS, durationS: settings.durationS };
  const continuousWindow = { warmupS: settings.warmupS, durationS: settings.continuousWindowS };
  const top = settings.top;
  // One draw of batches across rounds, so each round's batches are new ones.
  const staticDraw = mulberry32(3);
  const shrinkingDraw = mulberry32(4);
  const setups = settings.extras ? (['continuous', 'oneAtATime', 'static', 'shrinking'] as const) : (['continuous', 'oneAtATime', 'static'] as const);
  let round = 0;
  for (const order of inTurns(rounds, setups)) {
    for (const setup of order) {
      const firstBatch = out[setup].length === 0 ? 1 : 0;
      const label = (text: string) => `${text}${rounds > 1 ? `, round ${round + 1}` : ''}`;
      if (setup === 'continuous') out.continuous.push(await measure(node, label('continuous batching'), top, continuousWindow, (until) => closedLoop(node.httpBase, models.continuous, top, until, top + 1000 * round, undefined, false, true)));
      if (setup === 'oneAtATime') out.oneAtATime.push(await measure(node, label('one sequence at a time'), top, window, (until) => closedLoop(node.httpBase, models.oneAtATime, top, until, top + 1000 * round, undefined, false, true)));
      if (setup === 'static') out.static.push(await measureWholeBatches(node, models.whole, label('whole-request batches, static (rows kept to the longest)'), top, settings.staticBatches, 'static', staticDraw, firstBatch));
      if (setup === 'shrinking') out.shrinking.push(await measureWholeBatches(node, models.whole, label('whole-request batches, shrinking (finished rows leave)'), top, settings.staticBatches, 'shrinking', shrinkingDraw, firstBatch));
    }
    round += 1;
  }
  return out;
}

export type TtftSetup = 'idle' | 'waves' | 'staggered' | 'wavesArrival' | 'staggeredArrival';

export interface TtftWindow {
  /** The probes' figures in the window (TTFT, ITL, ...), with the background's beside them when there is one. */
  readonly probes: Measured;
  readonly background?: Measured;
  /** Every probe's TTFT in the window, ms, in send order (0.01 ms). */
  readonly ttftMs: number[];
}

export type TtftRounds = Partial<Record<TtftSetup, TtftWindow[]>>;

const TTFT_LABELS: Readonly<Record<TtftSetup, string>> = {
  idle: 'ttft probes, idle node',
  waves: 'ttft probes, 31 long generations in flight',
  staggered: 'ttft probes, 31 long generations in flight, staggered (no waves)',
  wavesArrival: 'ttft probes, 31 long generations in flight, prefill_order arrival',
  staggeredArrival: 'ttft probes, 31 long generations in flight, staggered, prefill_order arrival',
};

/** The probes' TTFTs of requests sent inside [fromMs, toMs) that got a first token. */
function probeTtfts(records: readonly StreamRecord[], fromMs: number, toMs: number): number[] {
  return records.filter((r) => r.ok && r.startMs >= fromMs && r.startMs < toMs && r.firstMs >= 0).map((r) => Math.round((r.firstMs - r.startMs) * 100) / 100);
}

/**
 * TTFT rounds: each round an idle window (`idleWindowS`: idle probes come ~4x faster) and the loaded ones
 * (`windowS`): 31 closed-loop generations of 256 tokens started together (they end and restart in waves of 31
 * arrivals) or with staggered first lengths, cancelled at the window's end, and short probes one after another.
 */
export async function ttftRounds(node: RunningNode, models: RoundModels, settings: RoundSettings, rounds: number, windowS: number, idleWindowS: number): Promise<TtftRounds> {
  const setups: TtftSetup[] = settings.extras ? ['idle', 'waves', 'staggered', 'wavesArrival', 'staggeredArrival'] : ['idle', 'waves', 'staggered'];
  const out: TtftRounds = {};
  let round = 0;
  for (const order of inTurns(rounds, setups)) {
    for (const setup of order) {
      const durationS = setup === 'idle' ? idleWindowS : windowS;
      const window = { warmupS: settings.warmupS, durationS };
      const model = setup === 'wavesArrival' || setup === 'staggeredArrival' ? models.arrival : models.continuous;
      const staggered = setup === 'staggered' || setup === 'staggeredArrival';
      const label = `${TTFT_LABELS[setup]}${rounds > 1 ? `, round ${round + 1}` : ''}`;
      const seed = 7 + 10 * round;
      let probeRecords: StreamRecord[] = [];
      let toMs = 0;
      let background: Measured | undefined;
      let idle: Measured | undefined;
      if (setup === 'idle') {
        idle = await measure(node, label, 1, window, async (until) => {
          toMs = until;
          return (probeRecords = await probes(node.httpBase, model, until, seed, settings.probeGapMs));
        });
      } else {
        const what = `long generations (background${staggered ? ', staggered' : ''}${model === models.arrival ? ', prefill_order arrival' : ''})`;
        background = await measure(node, `${what}${rounds > 1 ? `, round ${round + 1}` : ''}`, settings.top - 1, window, async (until) => {
          toMs = until;
          const [loop, probing] = await Promise.all([
            closedLoop(node.httpBase, model, settings.top - 1, until, 99 + round, 256, staggered, true),
            (async () => {
              await new Promise((r) => setTimeout(r, 200));
              return probes(node.httpBase, model, until, seed + 1, settings.probeGapMs);
            })(),
          ]);
          probeRecords = probing;
          return loop;
        });
      }
      const fromMs = toMs - durationS * 1000;
      const figures = windowFigures(probeRecords, fromMs, toMs);
      const ttftMs = probeTtfts(probeRecords, fromMs, toMs);
      const probesMeasured: Measured = idle ?? { label, concurrency: settings.top, ...figures, cpuUsPerToken: Number.NaN };
      (out[setup] ??= []).push({ probes: probesMeasured, ...(background !== undefined ? { background } : {}), ttftMs });
      process.stderr.write(`llm-batching: ${label}: TTFT p50 ${figures.ttftMs.p50.toFixed(1)} p99 ${figures.ttftMs.p99.toFixed(1)} ms over ${ttftMs.length} probes\n`);
    }
    round += 1;
  }
  return out;
}

/** A ratio read over every round pooled, with its bootstrap 90% interval and its value in each round. */
export interface RoundRatio extends Interval {
  readonly perRound: number[];
}

export interface RoundRatios {
  readonly continuousVsOneAtATime: RoundRatio;
  readonly continuousVsWholeRequestStatic: RoundRatio;
  readonly continuousVsWholeRequestShrinking?: RoundRatio;
  readonly ttftWavesVsIdleP99: RoundRatio;
  readonly ttftStaggeredVsIdleP99: RoundRatio;
  readonly ttftWavesVsIdleP99Arrival?: RoundRatio;
  readonly ttftStaggeredVsIdleP99Arrival?: RoundRatio;
  /** Probes per setup over all rounds. */
  readonly probes: Readonly<Partial<Record<TtftSetup, number>>>;
  /** The continuous top concurrency's inter-token latency p99 in each round, ms (and the p50s). */
  readonly itlP99Ms: number[];
  readonly itlP50Ms: number[];
}

const p99Of = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 99);

function rateRound(a: readonly Measured[], b: readonly Measured[]): RoundRatio | undefined {
  if (a.length === 0 || b.length === 0) return undefined;
  const interval = bootstrapInterval([a.map((m) => m.units ?? []), b.map((m) => m.units ?? [])], rateRatio);
  return { ...interval, perRound: a.map((m, i) => m.tokensPerSecond / (b[i]?.tokensPerSecond ?? Number.NaN)) };
}

function ttftRound(loaded: readonly TtftWindow[] | undefined, idle: readonly TtftWindow[]): RoundRatio | undefined {
  if (loaded === undefined || loaded.length === 0) return undefined;
  const interval = bootstrapInterval([loaded.map((w) => w.ttftMs), idle.map((w) => w.ttftMs)], p99Ratio);
  return { ...interval, perRound: loaded.map((w, i) => p99Of(w.ttftMs) / p99Of(idle[i]?.ttftMs ?? [])) };
}

const missing: RoundRatio = { value: Number.NaN, low: Number.NaN, high: Number.NaN, level: 0.9, reps: 0, perRound: [] };

/** The four target figures (and the extras') from the rounds that ran; NaN for a part that did not. */
export function roundRatios(throughput: ThroughputRounds | undefined, ttft: TtftRounds | undefined): RoundRatios {
  const idle = ttft?.idle ?? [];
  const shrinking = throughput === undefined ? undefined : rateRound(throughput.continuous, throughput.shrinking);
  const wavesArrival = ttftRound(ttft?.wavesArrival, idle);
  const staggeredArrival = ttftRound(ttft?.staggeredArrival, idle);
  return {
    continuousVsOneAtATime: (throughput && rateRound(throughput.continuous, throughput.oneAtATime)) ?? missing,
    continuousVsWholeRequestStatic: (throughput && rateRound(throughput.continuous, throughput.static)) ?? missing,
    ...(shrinking !== undefined ? { continuousVsWholeRequestShrinking: shrinking } : {}),
    ttftWavesVsIdleP99: ttftRound(ttft?.waves, idle) ?? missing,
    ttftStaggeredVsIdleP99: ttftRound(ttft?.staggered, idle) ?? missing,
    ...(wavesArrival !== undefined ? { ttftWavesVsIdleP99Arrival: wavesArrival } : {}),
    ...(staggeredArrival !== undefined ? { ttftStaggeredVsIdleP99Arrival: staggeredArrival } : {}),
    probes: Object.fromEntries(Object.entries(ttft ?? {}).map(([setup, windows]) => [setup, windows.reduce((s, w) => s + w.ttftMs.length, 0)])),
    itlP99Ms: throughput?.continuous.map((m) => m.itlMs.p99) ?? [],
    itlP50Ms: throughput?.continuous.map((m) => m.itlMs.p50) ?? [],
  };
}

/** "2.17x (90% 2.05-2.30; rounds 2.21, 2.12, 2.18)". */
export function formatRoundRatio(r: RoundRatio | undefined): string {
  if (r === undefined || Number.isNaN(r.value)) return '-';
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '-');
  return `${f(r.value)}x (${Math.round(r.level * 100)}% interval ${f(r.low)}-${f(r.high)}; per round ${r.perRound.map(f).join(', ')})`;
}
