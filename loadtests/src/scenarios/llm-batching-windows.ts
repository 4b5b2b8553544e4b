/**
 * llm-batching's measurement windows: a closed-loop (or probe) window with the node's CPU per token read
 * over it, and whole-request batches measured over whole batches; each keeps the pieces its rate came from
 * (seconds of the window, or batches) so the bench can put a bootstrap interval on a ratio of two rates.
 */
import type { BenchOptions } from '../lib/options/bench-options.js';
import { readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import type { RunningNode } from '../lib/processes/node-process.js';
import type { RateUnit } from '../lib/sampling/bootstrap.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { wholeRequestBatch, windowFigures, type StreamRecord, type WindowFigures } from './llm-stream-client.js';
import { pairedBatchLengths } from './static-batch-draw.js';

export interface Measured extends WindowFigures {
  readonly label: string;
  readonly concurrency: number;
  /** Node CPU (all threads) per generated token, µs. */
  readonly cpuUsPerToken: number;
  /** The node's busiest threads in the window, µs of CPU per token each (name/tid: the main thread's tid is the pid). */
  readonly busiestThreadsUsPerToken?: Readonly<Record<string, number>>;
  /** What the rate was made of: each second of the window, or each whole batch (for bootstrap intervals). */
  readonly units?: readonly RateUnit[];
}

/** Tokens arrived in each whole second of [fromMs, toMs] (each event carries its request's share of tokens). */
export function secondUnits(records: readonly StreamRecord[], fromMs: number, toMs: number): RateUnit[] {
  const seconds = Math.floor((toMs - fromMs) / 1000);
  const tokens = new Array<number>(seconds).fill(0);
  for (const r of records) {
    if (!r.ok) continue;
    const times = [r.firstMs, ...r.eventMs];
    for (const t of times) {
      const bin = Math.floor((t - fromMs) / 1000);
      if (bin >= 0 && bin < seconds) tokens[bin] = (tokens[bin] as number) + r.tokens / times.length;
    }
  }
  return tokens.map((t) => ({ tokens: t, seconds: 1 }));
}

export async function measure(
  node: RunningNode,
  label: string,
  concurrency: number,
  options: Pick<BenchOptions, 'warmupS' | 'durationS'>,
  load: (untilMs: number) => Promise<StreamRecord[]>,
): Promise<Measured> {
  const start = performance.now();
  const fromMs = start + options.warmupS * 1000;
  const toMs = fromMs + options.durationS * 1000;
  let before: Awaited<ReturnType<typeof readThreadCpu>> = [];
  let after: Awaited<ReturnType<typeof readThreadCpu>> = [];
  const cpuWindow = (async () => {
    await new Promise((r) => setTimeout(r, fromMs - performance.now()));
    before = await readThreadCpu(node.pid);
    await new Promise((r) => setTimeout(r, toMs - performance.now()));
    after = await readThreadCpu(node.pid);
  })();
  const records = await load(toMs);
  await cpuWindow;
  const measured = summarize(node, label, concurrency, windowFigures(records, fromMs, toMs), threadCpuDelta(before, after, node.pid), options.durationS);
  return { ...measured, units: secondUnits(records, fromMs, toMs) };
}

/** The window's figures with the node's CPU per token (and its busiest threads'), logged as they come. */
export function summarize(node: RunningNode, label: string, concurrency: number, figures: WindowFigures, cpu: ReturnType<typeof threadCpuDelta>, seconds: number): Measured {
  const tokens = figures.tokensPerSecond * seconds;
  const busiest = Object.entries(cpu.byThread)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([thread, us]) => [thread === `node/${node.pid}` || thread.endsWith(`/${node.pid}`) ? `main ${thread}` : thread, Math.round(us / tokens)] as const);
  const measured = { label, concurrency, ...figures, cpuUsPerToken: cpu.totalUs / tokens, busiestThreadsUsPerToken: Object.fromEntries(busiest) };
  process.stderr.write(
    `llm-batching: ${label} c=${concurrency}: ${figures.tokensPerSecond.toFixed(0)} tok/s, TTFT p50 ${figures.ttftMs.p50.toFixed(1)} p99 ${figures.ttftMs.p99.toFixed(1)} ms, ITL p99 ${figures.itlMs.p99.toFixed(1)} ms, errors ${figures.errors}, CPU µs/token by thread ${JSON.stringify(measured.busiestThreadsUsPerToken)}\n`,
  );
  return measured;
}

/**
 * Whole-request batches measured over a fixed count of whole batches (`warmupBatches` batches of warm-up first,
 * CPU read at batch boundaries): a batch's first steps carry all its rows and its last ones few useful rows, so a
 * window cut through a batch would flatter or punish the baseline. The batches come in mirrored pairs
 * (static-batch-draw.ts), so a round's useful tokens are exactly their expected count and its rate does not
 * hang on which lengths a round drew; each pair is one unit of the bootstrap (its two batches are not independent).
 */
export async function measureWholeBatches(
  node: RunningNode,
  model: string,
  label: string,
  size: number,
  batches: number,
  mode: 'static' | 'shrinking',
  random = mulberry32(3),
  warmupBatches = 1,
): Promise<Measured> {
  const plan = pairedBatchLengths(random, size, batches);
  for (let b = 0; b < warmupBatches; b++) await wholeRequestBatch(node.httpBase, model, size, random, mode);
  const before = await readThreadCpu(node.pid);
  const fromMs = performance.now();
  const records: StreamRecord[] = [];
  const units: RateUnit[] = [];
  for (let b = 0; b < plan.length; b += 2) {
    const pairFromMs = performance.now();
    let tokens = 0;
    for (const lengths of plan.slice(b, b + 2)) {
      const batch = await wholeRequestBatch(node.httpBase, model, size, random, mode, lengths);
      records.push(...batch);
      tokens += batch.reduce((s, r) => s + (r.ok ? r.tokens : 0), 0);
    }
    units.push({ tokens, seconds: (performance.now() - pairFromMs) / 1000 });
  }
  const toMs = performance.now();
  const after = await readThreadCpu(node.pid);
  const measured = summarize(node, label, size, windowFigures(records, fromMs, toMs + 1), threadCpuDelta(before, after, node.pid), (toMs + 1 - fromMs) / 1000);
  return { ...measured, units };
}
