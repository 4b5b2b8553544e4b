/**
 * The batching scenario's per-core part (issue 18): the node alone on core 0, the load generator (this
 * process) on core 1, and onnxruntime alone with one intra-op thread on core 0 as the anchor, measured
 * before and after the node. Figures measured this way move little with the rest of the machine, so
 * served/ceiling shows the node's own overhead, and the node's CPU per inference, split by thread,
 * shows where it goes.
 *
 * Cases: mlp_large at concurrency 64 over HTTP binary and gRPC with `preferred_batch_size: [64]` (a
 * delay of twice one batch of 64, so every execution is full) and with `[32, 64]` + 2 ms (the config a
 * Triton user writes first, compared with the ceiling at the average batch it formed); `simple`
 * (INT32, 16 elements) requests/s at concurrency 16 over both protocols.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { runClosedLoop } from '../lib/load/closed-loop.js';
import { checkedInferCall } from '../lib/load/checked-infer.js';
import { grpcInferTarget, h2loadAvailable, httpBinaryInferTarget, runH2load } from '../lib/load/h2load-loop.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import type { CeilingResult } from '../lib/load/ort-ceiling.js';
import { fetchModelStats, statsDelta, type ModelStatsSnapshot } from '../lib/sampling/node-stats.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { perCoreSupport, pinnedCommand, pinProcess, readThreadCpu, type ThreadCpu } from '../lib/per-core/index.js';
import { formatTable } from '../lib/output/text-table.js';
import { batchSizePoints, sampleBatchTimeline, type BatchSlice } from '../lib/sampling/batch-timeline.js';
import { renderLineChart } from '../lib/charts/svg-chart.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { machineInfo } from './scenario-output.js';
import { MLP_INPUT, MLP_MODEL, MLP_OUTPUT, MLP_WIDTH, fullBatchDelayUs, mlpConfigText, type MlpSetup } from './batching-configs.js';
import { fp32Tensor, int32Tensor } from './batching-requests.js';

const NODE_CORE = 0;
const LOAD_CORE = 1;
const MLP_CONCURRENCY = 64;
const SIMPLE_CONCURRENCY = 16;
const CEILING_SIZES = [16, 32, 48, 64];
const PROTOCOLS = ['http', 'grpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];
const CEILING_CLI = fileURLToPath(new URL('../lib/load/ort-ceiling-cli.ts', import.meta.url));

const log = (message: string): void => void process.stderr.write(`[bench batching per-core] ${message}\n`);

/** The node's CPU per inference by thread, in microseconds. */
export interface ThreadSplit {
  readonly totalUs: number;
  readonly eventLoopUs: number;
  /** The busiest thread besides the event loop: the worker running onnxruntime (one intra-op thread). */
  readonly onnxruntimeUs: number;
  /** Everything else: V8's GC and compiler helpers, libuv's pool, idle workers. */
  readonly helpersUs: number;
}

export interface PerCorePoint {
  readonly case: string;
  readonly model: string;
  readonly protocol: Protocol;
  readonly concurrency: number;
  readonly servedPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly avgBatch: number;
  readonly errors: number;
  readonly firstError?: string;
  /** The one-thread ceiling at this point's reference batch (64, or the average batch formed); mlp only. */
  readonly ceilingPerSec?: number;
  readonly ceilingCpuUs?: number;
  readonly servedOverCeiling?: number;
  readonly node: ThreadSplit;
  /** Node CPU per inference beyond the ceiling's own CPU per inference at the same batch; mlp only. */
  readonly beyondOrtUs?: number;
  readonly clientUs: number;
  /** What drove the load: this process's client, or h2load (gRPC; it reports a mean latency, no percentiles). */
  readonly loader: 'node' | 'h2load';
  readonly meanMs?: number;
  /** Batches formed over time during the warm-up ([32, 64] cases). */
  readonly timeline?: readonly BatchSlice[];
}

export interface PerCoreReport {
  readonly skipped?: string;
  readonly ceilingBefore?: CeilingResult;
  readonly ceilingAfter?: CeilingResult;
  readonly points: readonly PerCorePoint[];
  readonly table?: string;
}

/** Splits a /proc thread-CPU delta: the main thread, the busiest other thread, the rest. */
export function splitThreads(before: readonly ThreadCpu[], after: readonly ThreadCpu[], pid: number, count: number): ThreadSplit {
  const start = new Map(before.map((t) => [t.tid, t.cpuSeconds]));
  let eventLoop = 0;
  let busiest = 0;
  let total = 0;
  for (const t of after) {
    const us = (t.cpuSeconds - (start.get(t.tid) ?? 0)) * 1e6;
    total += us;
    if (t.tid === pid) eventLoop = us;
    else busiest = Math.max(busiest, us);
  }
  const per = (us: number): number => (count > 0 ? us / count : Number.NaN);
  return { totalUs: per(total), eventLoopUs: per(eventLoop), onnxruntimeUs: per(busiest), helpersUs: per(total - eventLoop - busiest) };
}

/** Linear interpolation of the ceiling (inf/s and CPU/inf) at a batch size between measured ones. */
export function ceilingAt(ceiling: CeilingResult, batch: number): { perSec: number; cpuUs: number } {
  const sorted = [...ceiling.points].sort((a, b) => a.batchSize - b.batchSize);
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first === undefined || last === undefined || !Number.isFinite(batch)) return { perSec: Number.NaN, cpuUs: Number.NaN };
  if (batch <= first.batchSize) return { perSec: first.inferencesPerSec, cpuUs: first.cpuUsPerInference };
  for (let i = 1; i < sorted.length; i++) {
    const lo = sorted[i - 1]!;
    const hi = sorted[i]!;
    if (batch <= hi.batchSize) {
      const f = (batch - lo.batchSize) / (hi.batchSize - lo.batchSize);
      return {
        perSec: lo.inferencesPerSec + f * (hi.inferencesPerSec - lo.inferencesPerSec),
        cpuUs: lo.cpuUsPerInference + f * (hi.cpuUsPerInference - lo.cpuUsPerInference),
      };
    }
  }
  return { perSec: last.inferencesPerSec, cpuUs: last.cpuUsPerInference };
}

function averageCeiling(a: CeilingResult, b: CeilingResult, batch: number): { perSec: number; cpuUs: number } {
  const x = ceilingAt(a, batch);
  const y = ceilingAt(b, batch);
  return { perSec: (x.perSec + y.perSec) / 2, cpuUs: (x.cpuUs + y.cpuUs) / 2 };
}

export async function pinnedCeiling(modelPath: string, quick: boolean): Promise<CeilingResult> {
  const args = ['--import', 'tsx', CEILING_CLI, modelPath, MLP_INPUT, String(MLP_WIDTH), '1', CEILING_SIZES.join(','), quick ? '200' : '500', quick ? '600' : '1500'];
  const [cmd, cmdArgs] = pinnedCommand(NODE_CORE, process.execPath, args);
  const child = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`ceiling process exited with code ${code}`);
  return JSON.parse(out) as CeilingResult;
}

export const mlpRequest = (): InferRequest => ({
  id: '',
  modelName: MLP_MODEL,
  inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)],
  outputs: [{ name: MLP_OUTPUT }],
  parameters: {},
});

const simpleRequest = (): InferRequest => ({
  id: '',
  modelName: 'simple',
  inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)],
  parameters: {},
});

export async function writeRepository(root: string, baseRepo: string, setup: MlpSetup): Promise<string> {
  const repo = join(root, `per-core-${setup.id}`);
  await rm(repo, { recursive: true, force: true });
  await mkdir(join(repo, MLP_MODEL, '1'), { recursive: true });
  await writeFile(join(repo, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
  await symlink(join(baseRepo, MLP_MODEL, '1', 'model.onnx'), join(repo, MLP_MODEL, '1', 'model.onnx'));
  await cp(join(baseRepo, 'simple'), join(repo, 'simple'), { recursive: true });
  const simpleConfig = join(repo, 'simple', 'config.pbtxt');
  if (!(await readFile(simpleConfig, 'utf8')).includes('intra_op_thread_count')) {
    await appendFile(simpleConfig, '\nparameters { key: "intra_op_thread_count" value: { string_value: "1" } }\n');
  }
  return repo;
}

export interface Case {
  /** Record batch sizes over time during the warm-up (so the measurement is not disturbed). */
  readonly timeline?: boolean;
  readonly node: RunningNode;
  readonly name: string;
  readonly protocol: Protocol;
  readonly concurrency: number;
  readonly request: InferRequest;
  readonly outputBytes: number;
}

/** BENCH_PER_CORE_ONLY=REGEX keeps the cases whose "case protocol" matches (profiling one case). */
const only = process.env.BENCH_PER_CORE_ONLY === undefined ? undefined : new RegExp(process.env.BENCH_PER_CORE_ONLY);
const wanted = (name: string, protocol: Protocol): boolean => only === undefined || only.test(`${name} ${protocol}`);

export type MeasuredPoint = Omit<PerCorePoint, 'ceilingPerSec' | 'ceilingCpuUs' | 'servedOverCeiling' | 'beyondOrtUs'>;

/**
 * Load comes from nghttp2's h2load where it is installed (lib/load/h2load-loop.ts says why);
 * BENCH_PER_CORE_LOADER=node keeps this process's clients.
 */
const loader = process.env.BENCH_PER_CORE_LOADER !== 'node' && h2loadAvailable() ? 'h2load' : 'node';

/** The node's threads and model statistics sampled at a measured window's edges, then its deltas. */
class NodeWindow {
  private stats: [ModelStatsSnapshot?, ModelStatsSnapshot?] = [];
  private threads: [ThreadCpu[]?, ThreadCpu[]?] = [];

  constructor(private readonly c: Case) {}

  async start(): Promise<void> {
    this.threads = [await readThreadCpu(this.c.node.pid)];
    this.stats = [await fetchModelStats(this.c.node.httpBase, this.c.request.modelName)];
  }

  async end(): Promise<void> {
    this.threads = [this.threads[0], await readThreadCpu(this.c.node.pid)];
    this.stats = [this.stats[0], await fetchModelStats(this.c.node.httpBase, this.c.request.modelName)];
  }

  result(): { delta: ReturnType<typeof statsDelta>; node: ThreadSplit } {
    const delta = statsDelta(this.stats[0]!, this.stats[1]!);
    return { delta, node: splitThreads(this.threads[0]!, this.threads[1]!, this.c.node.pid, delta.inferences) };
  }
}

async function measure(c: Case, options: BenchOptions): Promise<MeasuredPoint> {
  if (loader === 'h2load') return measureWithH2load(c, options);
  const client: InferClient =
    c.protocol === 'http' ? createHttpInferClient('127.0.0.1', c.node.httpPort, c.concurrency) : createGrpcInferClient('127.0.0.1', c.node.grpcPort);
  const model = c.request.modelName;
  const window = new NodeWindow(c);
  let clientCpu: [NodeJS.CpuUsage?, NodeJS.CpuUsage?] = [];
  // Starts with the load; the closed loop warms up meanwhile, so the slices show it settling in.
  const timeline = c.timeline === true ? sampleBatchTimeline(c.node.httpBase, model, Math.min(1500, options.warmupS * 1000)) : undefined;
  try {
    const run = await runClosedLoop({
      concurrency: c.concurrency,
      warmupMs: options.warmupS * 1000,
      measureMs: options.durationS * 1000,
      call: checkedInferCall(client, c.request, c.outputBytes),
      onWindowStart: async () => {
        clientCpu = [process.cpuUsage()];
        await window.start();
      },
      onWindowEnd: async () => {
        clientCpu = [clientCpu[0], process.cpuUsage(clientCpu[0])];
        await window.end();
      },
    });
    const { delta, node } = window.result();
    const own = clientCpu[1]!;
    return {
      case: c.name,
      model,
      protocol: c.protocol,
      concurrency: c.concurrency,
      servedPerSec: run.requestsPerSec,
      p50Ms: run.latency.p50Us / 1000,
      p99Ms: run.latency.p99Us / 1000,
      avgBatch: delta.avgBatchSize,
      errors: run.errors,
      ...(run.firstError !== undefined ? { firstError: run.firstError } : {}),
      node,
      ...(timeline === undefined ? {} : { timeline: await timeline }),
      clientUs: delta.inferences > 0 ? (own.user + own.system) / delta.inferences : Number.NaN,
      loader: 'node',
    };
  } finally {
    await client.close();
  }
}

export async function measureWithH2load(c: Case, options: BenchOptions): Promise<MeasuredPoint> {
  // One checked call first: h2load counts HTTP statuses only, not the answer or its grpc-status.
  const client = c.protocol === 'http' ? createHttpInferClient('127.0.0.1', c.node.httpPort, 1) : createGrpcInferClient('127.0.0.1', c.node.grpcPort);
  try {
    await checkedInferCall(client, c.request, c.outputBytes)();
  } finally {
    await client.close();
  }
  const target = c.protocol === 'http' ? httpBinaryInferTarget('127.0.0.1', c.node.httpPort, c.request) : grpcInferTarget('127.0.0.1', c.node.grpcPort, c.request);
  const bodyDir = await mkdtemp(join(tmpdir(), 'tessera-h2load-'));
  const model = c.request.modelName;
  const window = new NodeWindow(c);
  const timeline = c.timeline === true ? sampleBatchTimeline(c.node.httpBase, model, Math.min(1500, options.warmupS * 1000)) : undefined;
  const run = await runH2load(
    { target, bodyPath: join(bodyDir, 'request.body'), concurrency: c.concurrency, warmupMs: options.warmupS * 1000, measureMs: options.durationS * 1000, core: LOAD_CORE },
    { onWindowStart: () => window.start(), onWindowEnd: () => window.end() },
  ).finally(() => rm(bodyDir, { recursive: true, force: true }));
  const { delta, node } = window.result();
  const errors = delta.failures + run.failed;
  return {
    case: c.name,
    model,
    protocol: c.protocol,
    concurrency: c.concurrency,
    servedPerSec: delta.inferences / run.windowS,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    meanMs: run.meanUs / 1000,
    avgBatch: delta.avgBatchSize,
    errors,
    ...(errors > 0 ? { firstError: `${delta.failures} failed on the node, ${run.failed} failed in h2load` } : {}),
    node,
    ...(timeline === undefined ? {} : { timeline: await timeline }),
    clientUs: delta.inferences > 0 ? run.clientCpuUs / delta.inferences : Number.NaN,
    loader: 'h2load',
  };
}

/**
 * BENCH_NODE_ARGS="--grpc-raw-h2=true ...": tessera-node arguments for every node this run starts. With
 * TESSERA_BUNDLE_DIR it picks one side of an A/B run taken in turns (one run per side and round).
 */
export function benchNodeArgs(value: string | undefined): string[] {
  return (value ?? '').split(/\s+/).filter((arg) => arg !== '');
}

async function withNode<T>(repo: string, body: (node: RunningNode) => Promise<T>): Promise<T> {
  // BENCH_CPU_PROF_DIR=DIR: the node writes a --cpu-prof profile per thread there (summarize with
  // loadtests/src/lib/profile/cpu-profile-summary.ts).
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  const node = await launchNode({
    modelRepository: repo,
    pinCore: NODE_CORE,
    extraArgs: benchNodeArgs(process.env.BENCH_NODE_ARGS),
    ...(profDir === undefined ? {} : { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] }),
  });
  try {
    await waitForModelReady(node.httpBase, MLP_MODEL);
    await waitForModelReady(node.httpBase, 'simple');
    return await body(node);
  } finally {
    await node.stop();
  }
}

const fixed = (x: number | undefined, digits = 0): string => (x !== undefined && Number.isFinite(x) ? x.toFixed(digits) : '-');

export function perCoreTable(points: readonly PerCorePoint[]): string {
  return formatTable(
    ['case', 'proto', 'conc', 'served/s', 'ceiling/s', 'served/ceiling', 'avg batch', 'p50 ms', 'p99 ms', 'node us/inf', 'loop', 'ort thread', 'helpers', 'beyond ort', 'client us', 'note'],
    points.map((p) => [
      p.case,
      p.protocol,
      String(p.concurrency),
      fixed(p.servedPerSec),
      fixed(p.ceilingPerSec),
      p.servedOverCeiling === undefined ? '-' : `${fixed(p.servedOverCeiling, 2)}x`,
      fixed(p.avgBatch, 1),
      fixed(p.p50Ms, 1),
      fixed(p.p99Ms, 1),
      fixed(p.node.totalUs),
      fixed(p.node.eventLoopUs),
      fixed(p.node.onnxruntimeUs),
      fixed(p.node.helpersUs),
      fixed(p.beyondOrtUs),
      fixed(p.clientUs),
      [p.loader === 'h2load' ? `h2load, mean ${fixed(p.meanMs, 1)} ms` : '', p.errors > 0 ? `${p.errors} errors: ${p.firstError ?? ''}` : ''].filter((s) => s !== '').join('; '),
    ]),
  );
}

/** Gives this process (all its threads) cores 0..cores-1 again. */
function unpinSelf(cores: number): void {
  spawnSync('taskset', ['-a', '-p', '-c', `0-${cores - 1}`, String(process.pid)], { stdio: 'ignore' });
}

export async function runPerCore(options: BenchOptions, work: string, baseRepo: string): Promise<PerCoreReport> {
  const support = perCoreSupport();
  if (!support.ok) {
    log(`skipped: ${support.why}`);
    return { skipped: support.why, points: [] };
  }
  // Read before pinning: availableParallelism() follows this process's affinity.
  const cores = availableParallelism();
  // The load generator (this process, all its threads) on core 1.
  pinProcess(process.pid, LOAD_CORE);
  try {
    return await measureAll(options, work, baseRepo);
  } finally {
    // The whole-box part that follows uses every core again.
    unpinSelf(cores);
  }
}

/** Where bin/tessera-node.js will run from (launch.js's rule, without its staleness check). */
function nodeSource(): string {
  const bundle = process.env.TESSERA_BUNDLE_DIR ?? fileURLToPath(new URL('../../../dist/', import.meta.url));
  if (process.env.TESSERA_FROM_SOURCE !== '1' && existsSync(join(bundle, 'tessera-node.js'))) return `the bundle in ${bundle} (unless a source changed since)`;
  // The sources through tsx served `simple` ~10x slower per core than the bundle here (docs/benchmarks.md).
  return 'the TypeScript sources (run `npm run build` first for production figures)';
}

async function measureAll(options: BenchOptions, work: string, baseRepo: string): Promise<PerCoreReport> {
  const nodeArgs = benchNodeArgs(process.env.BENCH_NODE_ARGS);
  if (nodeArgs.length > 0) log(`node arguments: ${nodeArgs.join(' ')}`);
  log(`node runs from ${nodeSource()}; load from ${loader === 'h2load' ? 'h2load' : 'this process (raw HTTP/1.1 and node:http2 clients)'}`);
  const modelPath = join(baseRepo, MLP_MODEL, '1', 'model.onnx');
  log(`ceiling before: onnxruntime, 1 intra-op thread, core ${NODE_CORE}, batch ${CEILING_SIZES.join(', ')}`);
  const ceilingBefore = await pinnedCeiling(modelPath, options.quick);
  const at64 = ceilingBefore.points.find((p) => p.batchSize === 64);
  const setups: MlpSetup[] = [
    { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: fullBatchDelayUs(at64?.execAvgUs ?? Number.NaN) } },
    { id: 'pref32-64-2ms', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [32, 64], maxQueueDelayUs: 2000 } },
    // The same with the queue delay counted from the instance freeing up (what the batch timelines asked for).
    { id: 'pref32-64-2ms-idle', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [32, 64], maxQueueDelayUs: 2000 }, queueDelayFromIdle: true },
  ];
  const raw: Omit<PerCorePoint, 'ceilingPerSec' | 'ceilingCpuUs' | 'servedOverCeiling' | 'beyondOrtUs'>[] = [];
  for (const [i, setup] of setups.entries()) {
    const repo = await writeRepository(work, baseRepo, setup);
    await withNode(repo, async (node) => {
      for (const protocol of PROTOCOLS) {
        if (!wanted(`mlp_large ${setup.id}`, protocol)) continue;
        const point = await measure({ node, name: `mlp_large ${setup.id}`, protocol, timeline: setup.id !== 'pref64', concurrency: MLP_CONCURRENCY, request: mlpRequest(), outputBytes: MLP_WIDTH * 4 }, options);
        log(`  ${point.case} ${protocol}: ${point.servedPerSec.toFixed(0)} inf/s, batch ${fixed(point.avgBatch, 1)}, node ${fixed(point.node.totalUs)} us/inf (loop ${fixed(point.node.eventLoopUs)})`);
        raw.push(point);
      }
      if (i === 0) {
        for (const protocol of PROTOCOLS) {
          if (!wanted('simple', protocol)) continue;
          const point = await measure({ node, name: 'simple', protocol, concurrency: SIMPLE_CONCURRENCY, request: simpleRequest(), outputBytes: 16 * 4 }, options);
          log(`  simple ${protocol}: ${point.servedPerSec.toFixed(0)} req/s, node ${fixed(point.node.totalUs)} us/req (loop ${fixed(point.node.eventLoopUs)})`);
          raw.push(point);
        }
      }
    });
  }
  log('ceiling after');
  const ceilingAfter = await pinnedCeiling(modelPath, options.quick);
  const points: PerCorePoint[] = raw.map((p) => {
    if (p.model !== MLP_MODEL) return p;
    // [64] is held to the ceiling at 64; [32, 64] to the ceiling at the batch it formed.
    const batch = p.case.endsWith('pref64') ? 64 : p.avgBatch;
    const ceiling = averageCeiling(ceilingBefore, ceilingAfter, batch);
    return {
      ...p,
      ceilingPerSec: ceiling.perSec,
      ceilingCpuUs: ceiling.cpuUs,
      servedOverCeiling: p.servedPerSec / ceiling.perSec,
      beyondOrtUs: p.node.totalUs - ceiling.cpuUs,
    };
  });
  return { ceilingBefore, ceilingAfter, points, table: perCoreTable(points) };
}

/** `npm run bench -- batching-per-core`: the per-core part alone (JSON and table in the results folder). */
export async function runBatchingPerCoreScenario(options: BenchOptions): Promise<number> {
  const started = new Date();
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
  try {
    const baseRepo = join(work, 'base');
    await writeExampleRepository(baseRepo, { only: [MLP_MODEL, 'simple'] });
    const report = await runPerCore(options, work, baseRepo);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    const nodeArgs = benchNodeArgs(process.env.BENCH_NODE_ARGS);
    const json = {
      scenario: 'batching-per-core',
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      startedAt: started.toISOString(),
      machine: machineInfo(),
      options,
      node: { bundle: process.env.TESSERA_BUNDLE_DIR ?? 'dist', args: nodeArgs },
      ...report,
    };
    await writeFile(join(dir, 'batching-per-core.json'), `${JSON.stringify(json, null, 2)}\n`);
    const text = report.table ?? `skipped: ${report.skipped ?? ''}`;
    await writeFile(join(dir, 'batching-per-core.txt'), `${text}\n`);
    const chart = timelineChart(report.points);
    if (chart !== undefined) await writeFile(join(dir, 'batching-per-core-batches.svg'), chart);
    process.stdout.write(`${text}\nresults: ${join(dir, 'batching-per-core.json')}\n`);
    return report.points.reduce((n, p) => n + p.errors, 0) > 0 ? 1 : 0;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Batch size over time for the cases that recorded a timeline, one series per case. */
export function timelineChart(points: readonly PerCorePoint[]): string | undefined {
  const series = points
    .filter((p) => p.timeline !== undefined && p.timeline.length > 0)
    .map((p) => ({ name: `${p.case} ${p.protocol}`, points: batchSizePoints(p.timeline!) }));
  if (series.length === 0) return undefined;
  return renderLineChart({
    title: 'mlp_large, [32, 64] + 2 ms, concurrency 64, per core: batch size over the warm-up',
    xLabel: 'ms since the load started',
    yLabel: 'average batch size in a ~3 ms slice',
    series,
    width: 960,
  });
}
