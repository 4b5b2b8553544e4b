/**
 * Issue 18: why the `[64]` wave's onnxruntime thread reads dearer per inference over gRPC than over HTTP binary.
 * One node (one bundle) alone on core 0 with `preferred_batch_size: [64]`, h2load on core 1, the protocols in turns
 * (order rotating), onnxruntime's one-thread ceiling on core 0 first in every round. Per window: the batch sizes the
 * node formed (the statistics' `batch_stats`, as a histogram), the run's own time per batch of 64 (`compute_infer`)
 * against the ceiling's session.run at 64, and per thread (main, onnxruntime's, the rest) CPU per inference and the
 * context switches per batch, voluntary and not, from /proc/<pid>/task/<tid>/status.
 *
 *   node --import tsx loadtests/src/scenarios/node-wave-batches.ts BUNDLE_DIR [ROUNDS] [SECONDS] [OUT.json]
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { grpcInferTarget, h2loadAvailable, httpBinaryInferTarget, runH2load } from '../lib/load/h2load-loop.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { median } from '../lib/sampling/percentiles.js';
import { MLP_MODEL, type MlpSetup } from './batching-configs.js';
import { mlpRequest, pinnedCeiling, writeRepository } from './batching-per-core.js';

const PROTOCOLS = ['http', 'grpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];
const SETUP: MlpSetup = { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: 60_000 } };
const log = (message: string): void => void process.stderr.write(`${message}\n`);

interface ThreadSample {
  readonly cpuUs: number;
  readonly voluntary: number;
  readonly involuntary: number;
}

interface BatchStat {
  readonly batch_size: number;
  readonly compute_infer: { readonly count: number; readonly ns: number };
}

interface Snapshot {
  readonly threads: Map<number, ThreadSample>;
  readonly batches: readonly BatchStat[];
  readonly inferences: number;
}

async function threadSample(pid: number, tid: number): Promise<ThreadSample | undefined> {
  try {
    const [stat, status] = await Promise.all([readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8'), readFile(`/proc/${pid}/task/${tid}/status`, 'utf8')]);
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { cpuUs: (Number(rest[11]) + Number(rest[12])) * 1e4, voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') };
  } catch {
    return undefined;
  }
}

async function snapshot(node: RunningNode): Promise<Snapshot> {
  const tids = (await readdir(`/proc/${node.pid}/task`)).map(Number);
  const threads = new Map<number, ThreadSample>();
  for (const tid of tids) {
    const sample = await threadSample(node.pid, tid);
    if (sample !== undefined) threads.set(tid, sample);
  }
  const response = await fetch(`${node.httpBase}/v2/models/${MLP_MODEL}/stats`);
  const entry = ((await response.json()) as { model_stats: { inference_count: number; batch_stats: BatchStat[] }[] }).model_stats[0]!;
  return { threads, batches: entry.batch_stats, inferences: entry.inference_count };
}

interface ThreadDelta {
  readonly cpuUsPerInference: number;
  readonly voluntaryPerBatch: number;
  readonly involuntaryPerBatch: number;
}

interface Window {
  readonly protocol: Protocol;
  readonly round: number;
  readonly servedPerSec: number;
  /** Batches run in the window, by size. */
  readonly histogram: Readonly<Record<number, number>>;
  /** The node's compute_infer per batch of 64, µs (onnxruntime's run as the node times it). */
  readonly runUsAt64: number;
  readonly ceilingRunUsAt64: number;
  /** The run's share of the wave's period (all runs' compute_infer over the window): 1 − the main thread's critical path. */
  readonly duty: number;
  /** The wave's period less its run, µs: answers out, the client's turn, requests in, the hand-off. */
  readonly gapUsPerWave: number;
  readonly main: ThreadDelta;
  readonly onnxruntime: ThreadDelta;
  readonly helpers: ThreadDelta;
}

function threadDelta(before: Snapshot, after: Snapshot, tids: readonly number[], inferences: number, batches: number): ThreadDelta {
  let cpu = 0;
  let voluntary = 0;
  let involuntary = 0;
  for (const tid of tids) {
    const a = after.threads.get(tid);
    if (a === undefined) continue;
    const b = before.threads.get(tid) ?? { cpuUs: 0, voluntary: 0, involuntary: 0 };
    cpu += a.cpuUs - b.cpuUs;
    voluntary += a.voluntary - b.voluntary;
    involuntary += a.involuntary - b.involuntary;
  }
  return { cpuUsPerInference: cpu / inferences, voluntaryPerBatch: voluntary / batches, involuntaryPerBatch: involuntary / batches };
}

function windowOf(protocol: Protocol, round: number, seconds: number, before: Snapshot, after: Snapshot, node: RunningNode, ceilingRunUs: number): Window {
  const histogram: Record<number, number> = {};
  let batches = 0;
  let runNs = 0;
  let runs64 = 0;
  let allRunNs = 0;
  for (const stat of after.batches) {
    const was = before.batches.find((s) => s.batch_size === stat.batch_size);
    const count = stat.compute_infer.count - (was?.compute_infer.count ?? 0);
    if (count <= 0) continue;
    histogram[stat.batch_size] = count;
    batches += count;
    allRunNs += stat.compute_infer.ns - (was?.compute_infer.ns ?? 0);
    if (stat.batch_size === 64) {
      runs64 = count;
      runNs = stat.compute_infer.ns - (was?.compute_infer.ns ?? 0);
    }
  }
  const inferences = after.inferences - before.inferences;
  // The onnxruntime thread is the busiest thread other than the main one in the window.
  const cpuOf = (tid: number): number => (after.threads.get(tid)?.cpuUs ?? 0) - (before.threads.get(tid)?.cpuUs ?? 0);
  const others = [...after.threads.keys()].filter((tid) => tid !== node.pid);
  const ort = others.reduce((best, tid) => (cpuOf(tid) > cpuOf(best) ? tid : best), others[0]!);
  return {
    protocol,
    round,
    servedPerSec: inferences / seconds,
    histogram,
    runUsAt64: runs64 > 0 ? runNs / runs64 / 1000 : Number.NaN,
    ceilingRunUsAt64: ceilingRunUs,
    duty: allRunNs / 1e9 / seconds,
    gapUsPerWave: (seconds * 1e9 - allRunNs) / batches / 1000,
    main: threadDelta(before, after, [node.pid], inferences, batches),
    onnxruntime: threadDelta(before, after, [ort], inferences, batches),
    helpers: threadDelta(before, after, others.filter((tid) => tid !== ort), inferences, batches),
  };
}

function table(windows: readonly Window[]): string {
  const lines = [
    '| proto | served/s | batches by size | run µs at 64 (ceiling) | run share of the window | gap µs/wave | main µs/inf | ort µs/inf | helpers µs/inf | ort switches/batch vol; invol | main switches/batch vol; invol | windows |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const protocol of PROTOCOLS) {
    const own = windows.filter((w) => w.protocol === protocol);
    if (own.length === 0) continue;
    const m = (f: (w: Window) => number, digits = 0): string => median(own.map(f)).toFixed(digits);
    const sizes = new Map<number, number>();
    for (const w of own) for (const [size, count] of Object.entries(w.histogram)) sizes.set(Number(size), (sizes.get(Number(size)) ?? 0) + count);
    const histogram = [...sizes].sort((a, b) => b[0] - a[0]).map(([size, count]) => `${size}: ${count}`).join(', ');
    lines.push(
      `| ${protocol} | ${m((w) => w.servedPerSec)} | ${histogram} | ${m((w) => w.runUsAt64)} (${m((w) => w.ceilingRunUsAt64)}) | ${m((w) => w.duty, 3)} | ${m((w) => w.gapUsPerWave)} | ${m((w) => w.main.cpuUsPerInference)} | ` +
        `${m((w) => w.onnxruntime.cpuUsPerInference)} | ${m((w) => w.helpers.cpuUsPerInference)} | ${m((w) => w.onnxruntime.voluntaryPerBatch, 1)}; ${m((w) => w.onnxruntime.involuntaryPerBatch, 1)} | ` +
        `${m((w) => w.main.voluntaryPerBatch, 1)}; ${m((w) => w.main.involuntaryPerBatch, 1)} | ${own.length} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [bundle, roundsText = '3', secondsText = '6', out] = process.argv.slice(2);
  if (bundle === undefined) throw new Error('usage: node-wave-batches.ts BUNDLE_DIR [ROUNDS] [SECONDS] [OUT.json]');
  if (!perCoreSupport().ok || !h2loadAvailable()) throw new Error('needs two cores, taskset and h2load');
  const rounds = Number(roundsText);
  const seconds = Number(secondsText);
  const work = await mkdtemp(join(tmpdir(), 'tessera-wave-batches-'));
  const windows: Window[] = [];
  try {
    const base = join(work, 'base');
    await writeExampleRepository(base, { only: [MLP_MODEL, 'simple'] });
    const modelPath = join(base, MLP_MODEL, '1', 'model.onnx');
    pinProcess(process.pid, 1);
    const repo = await writeRepository(work, base, SETUP);
    process.env.TESSERA_BUNDLE_DIR = bundle;
    const node = await launchNode({ modelRepository: repo, pinCore: 0 });
    try {
      await waitForModelReady(node.httpBase, MLP_MODEL);
      for (let round = 1; round <= rounds; round++) {
        const ceiling = await pinnedCeiling(modelPath, true);
        const ceilingRunUs = ceiling.points.find((p) => p.batchSize === 64)?.execAvgUs ?? Number.NaN;
        const order = round % 2 === 1 ? PROTOCOLS : ([...PROTOCOLS].reverse() as Protocol[]);
        for (const protocol of order) {
          const target = protocol === 'http' ? httpBinaryInferTarget('127.0.0.1', node.httpPort, mlpRequest()) : grpcInferTarget('127.0.0.1', node.grpcPort, mlpRequest());
          const bodyDir = await mkdtemp(join(tmpdir(), 'wave-batches-'));
          const marks: Snapshot[] = [];
          const run = await runH2load(
            { target, bodyPath: join(bodyDir, 'request.body'), concurrency: 64, warmupMs: 2000, measureMs: seconds * 1000, core: 1 },
            { onWindowStart: async () => void marks.push(await snapshot(node)), onWindowEnd: async () => void marks.push(await snapshot(node)) },
          ).finally(() => rm(bodyDir, { recursive: true, force: true }));
          const w = windowOf(protocol, round, run.windowS, marks[0]!, marks[1]!, node, ceilingRunUs);
          windows.push(w);
          log(
            `round ${round} ${protocol}: ${w.servedPerSec.toFixed(0)} inf/s, batches ${JSON.stringify(w.histogram)}, run at 64 ${w.runUsAt64.toFixed(0)} µs (ceiling ${ceilingRunUs.toFixed(0)}), run share ${w.duty.toFixed(3)}, gap ${w.gapUsPerWave.toFixed(0)} µs/wave, ` +
              `main ${w.main.cpuUsPerInference.toFixed(0)}, ort ${w.onnxruntime.cpuUsPerInference.toFixed(0)}, helpers ${w.helpers.cpuUsPerInference.toFixed(0)} µs/inf; ` +
              `ort switches/batch ${w.onnxruntime.voluntaryPerBatch.toFixed(1)} vol ${w.onnxruntime.involuntaryPerBatch.toFixed(1)} invol; main ${w.main.voluntaryPerBatch.toFixed(1)} vol ${w.main.involuntaryPerBatch.toFixed(1)} invol`,
          );
        }
      }
    } finally {
      await node.stop();
    }
    const text = `bundle = ${bundle}\n${table(windows)}\n`;
    process.stdout.write(text);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), bundle, windows, table: text }, null, 2)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
