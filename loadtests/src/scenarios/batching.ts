/**
 * `npm run bench -- batching`: does the dynamic batcher turn a compute-bound model's per-request cost
 * into batch throughput, and at what latency?
 *
 * mlp_large (FP32 1024→4096→4096→1024, ~100 MB of weights: at batch 1 every run streams all weights
 * for one row, so batching is worth a lot) is measured three ways:
 *  1. the ceiling: onnxruntime-node in this process at batch 1..64, no server (see ort-ceiling.ts);
 *  2. the node with dynamic batching, the best of a few configs (batching-configs.ts) tried briefly
 *     over gRPC at concurrency 64, then closed-loop concurrency 1..128 over gRPC and HTTP binary;
 *  3. the same node config without dynamic_batching (default scheduler), same loads.
 * Then `simple` (tiny INT32 add/sub) shows the per-request overhead of each protocol in requests/s.
 *
 * Targets, evaluated at concurrency 64 per protocol: batched ≥ 0.8 × ceiling, batched ≥ 3 × unbatched,
 * p99 ≤ max_queue_delay + 2 × the node's measured batch execution in the same window (a request that
 * just missed a batch waits for it and then rides the next one; the ceiling's time for that batch
 * size is printed beside it).
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { fp32Tensor, int32Tensor } from './batching-requests.js';
import { runPerCore, type PerCoreReport } from './batching-per-core.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { runClosedLoop } from '../lib/load/closed-loop.js';
import { checkedInferCall } from '../lib/load/checked-infer.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { loadPoint, type CpuPerInference, type LoadPoint } from '../lib/load/load-point.js';
import { fetchModelStats, statsDelta, type ModelStatsSnapshot } from '../lib/sampling/node-stats.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { batchExecutionUs, measureOrtCeiling, type CeilingResult } from '../lib/load/ort-ceiling.js';
import { toPerfCsv } from '../lib/output/perf-csv.js';
import { cpuUsPerRequest, processCpuSeconds, threadCpuSeconds } from '../lib/sampling/proc-cpu.js';
import { DEFAULT_RESULTS_ROOT, writeResults } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { machineInfo } from './scenario-output.js';
import {
  MLP_INPUT,
  MLP_MODEL,
  MLP_OUTPUT,
  MLP_WIDTH,
  batchingCandidates,
  mlpConfigText,
  withoutBatching,
  type MlpSetup,
} from './batching-configs.js';

const CONCURRENCIES = [1, 8, 32, 64, 128];
const QUICK_CONCURRENCIES = [1, 64];
const TARGET_CONCURRENCY = 64;
const CEILING_BATCH_SIZES = [1, 8, 16, 32, 64];
const SIMPLE_MODEL = 'simple';
const SIMPLE_CONCURRENCIES = [1, 16];
const PROTOCOLS = ['grpc', 'http'] as const;
type Protocol = (typeof PROTOCOLS)[number];

const log = (message: string): void => void process.stderr.write(`[bench batching] ${message}\n`);

const mlpRequest = (): InferRequest => ({
  id: '',
  modelName: MLP_MODEL,
  inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)],
  outputs: [{ name: MLP_OUTPUT }],
  parameters: {},
});

const simpleRequest = (): InferRequest => ({
  id: '',
  modelName: SIMPLE_MODEL,
  inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)],
  parameters: {},
});

/**
 * A model repository for one setup: its config next to a link to the generated 100 MB model file.
 * `simple` is copied, not linked: the node's repository scan skips symlinked model directories.
 */
async function writeSetupRepository(root: string, baseRepo: string, setup: MlpSetup, withSimple: boolean): Promise<string> {
  const repo = join(root, setup.id);
  await rm(repo, { recursive: true, force: true });
  await mkdir(join(repo, MLP_MODEL, '1'), { recursive: true });
  await writeFile(join(repo, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
  await symlink(join(baseRepo, MLP_MODEL, '1', 'model.onnx'), join(repo, MLP_MODEL, '1', 'model.onnx'));
  if (withSimple) await cp(join(baseRepo, SIMPLE_MODEL), join(repo, SIMPLE_MODEL), { recursive: true });
  return repo;
}

async function startNode(repo: string, models: readonly string[]): Promise<RunningNode> {
  const node = await launchNode({ modelRepository: repo });
  try {
    for (const model of models) await waitForModelReady(node.httpBase, model);
  } catch (error) {
    await node.stop();
    throw error;
  }
  return node;
}

function clientFor(node: RunningNode, protocol: Protocol, concurrency: number): InferClient {
  return protocol === 'http'
    ? createHttpInferClient('127.0.0.1', node.httpPort, concurrency)
    : createGrpcInferClient('127.0.0.1', node.grpcPort);
}

interface Load {
  readonly node: RunningNode;
  readonly setup: string;
  readonly protocol: Protocol;
  readonly concurrency: number;
  readonly request: InferRequest;
  /** Bytes of the first output, checked on every response so a wrong answer is not benchmarked. */
  readonly outputBytes: number;
  readonly warmupS: number;
  readonly durationS: number;
}

/** CPU seconds so far: the node's main thread, the whole node, this process. */
interface CpuReading {
  readonly nodeMain: number;
  readonly node: number;
  readonly client: number;
}

async function readCpu(node: RunningNode): Promise<CpuReading> {
  // The thread first: the process figure read after it includes all the thread had.
  const nodeMain = await threadCpuSeconds(node.pid, node.pid);
  const whole = await processCpuSeconds(node.pid);
  const own = process.cpuUsage();
  return { nodeMain, node: whole, client: (own.user + own.system) / 1e6 };
}

function cpuPerInference(before: CpuReading, after: CpuReading, inferences: number): CpuPerInference | undefined {
  const main = cpuUsPerRequest(before.nodeMain, after.nodeMain, inferences);
  const node = cpuUsPerRequest(before.node, after.node, inferences);
  const client = cpuUsPerRequest(before.client, after.client, inferences);
  if (![main, node, client].every(Number.isFinite)) return undefined;
  return { nodeMainUs: main, nodeOtherUs: Math.max(0, node - main), clientUs: client };
}

async function measureLoad(load: Load): Promise<LoadPoint> {
  const client = clientFor(load.node, load.protocol, load.concurrency);
  const model = load.request.modelName;
  let before: ModelStatsSnapshot | undefined;
  let after: ModelStatsSnapshot | undefined;
  let cpuBefore: CpuReading | undefined;
  let cpuAfter: CpuReading | undefined;
  try {
    const run = await runClosedLoop({
      concurrency: load.concurrency,
      warmupMs: load.warmupS * 1000,
      measureMs: load.durationS * 1000,
      call: checkedInferCall(client, load.request, load.outputBytes),
      onWindowStart: async () => {
        cpuBefore = await readCpu(load.node);
        before = await fetchModelStats(load.node.httpBase, model);
      },
      onWindowEnd: async () => {
        cpuAfter = await readCpu(load.node);
        after = await fetchModelStats(load.node.httpBase, model);
      },
    });
    const served = loadPoint({ model, protocol: load.protocol, setup: load.setup }, run, statsDelta(before!, after!));
    const cpu = cpuPerInference(cpuBefore!, cpuAfter!, served.server.inferences);
    const point: LoadPoint = cpu === undefined ? served : { ...served, cpu };
    const batch = Number.isFinite(point.server.avgBatchSize) ? point.server.avgBatchSize.toFixed(1) : '-';
    log(
      `  ${model} ${load.setup} ${load.protocol} c=${load.concurrency}: ${point.inferencesPerSec.toFixed(1)} inf/s, ` +
        `p50 ${(point.latency.p50Us / 1000).toFixed(1)} ms, p99 ${(point.latency.p99Us / 1000).toFixed(1)} ms, batch ${batch}` +
        (cpu === undefined ? '' : `, CPU/inf node ${cpu.nodeMainUs.toFixed(0)}+${cpu.nodeOtherUs.toFixed(0)} us client ${cpu.clientUs.toFixed(0)} us`) +
        (point.errors > 0 ? `, ${point.errors} errors (${point.firstError})` : ''),
    );
    return point;
  } finally {
    await client.close();
  }
}

interface Target {
  readonly protocol: Protocol;
  readonly name: string;
  readonly value: number;
  readonly threshold: number;
  readonly pass: boolean;
  readonly detail: string;
}

/**
 * Where a served inference's CPU goes, and the throughput the machine's cores allow at that cost: the
 * load generator shares the cores with the node, so every microsecond it or the node's event loop
 * spends per inference is one onnxruntime does not get.
 */
function cpuBudget(cpu: CpuPerInference, ceilingCpuUs: number): string {
  const totalUs = cpu.nodeMainUs + cpu.nodeOtherUs + cpu.clientUs;
  const cores = availableParallelism();
  return (
    `CPU per inference ${totalUs.toFixed(0)} us = node onnxruntime and other threads ${cpu.nodeOtherUs.toFixed(0)} ` +
    `(ceiling ${ceilingCpuUs.toFixed(0)}) + node event loop ${cpu.nodeMainUs.toFixed(0)} + load generator ${cpu.clientUs.toFixed(0)}; ` +
    `${cores} cores allow ${((cores * 1e6) / totalUs).toFixed(0)} inf/s at that cost`
  );
}

function evaluateTargets(
  ceiling: CeilingResult,
  chosen: MlpSetup,
  batched: readonly LoadPoint[],
  unbatched: readonly LoadPoint[],
): Target[] {
  const targets: Target[] = [];
  for (const protocol of PROTOCOLS) {
    const at = (points: readonly LoadPoint[]) =>
      points.find((p) => p.protocol === protocol && p.concurrency === TARGET_CONCURRENCY);
    const served = at(batched);
    const plain = at(unbatched);
    if (served === undefined) continue;
    const ceilingRatio = served.inferencesPerSec / ceiling.best.inferencesPerSec;
    targets.push({
      protocol,
      name: 'served >= 0.8 x ceiling',
      value: ceilingRatio,
      threshold: 0.8,
      pass: ceilingRatio >= 0.8,
      detail:
        `${served.inferencesPerSec.toFixed(1)} / ${ceiling.best.inferencesPerSec.toFixed(1)} inf/s (ceiling at batch ${ceiling.best.batchSize})` +
        (served.cpu === undefined ? '' : `; ${cpuBudget(served.cpu, ceiling.best.cpuUsPerInference)}`),
    });
    if (plain !== undefined) {
      const speedup = served.inferencesPerSec / plain.inferencesPerSec;
      targets.push({
        protocol,
        name: 'batched >= 3 x unbatched',
        value: speedup,
        threshold: 3,
        pass: speedup >= 3,
        detail: `${served.inferencesPerSec.toFixed(1)} / ${plain.inferencesPerSec.toFixed(1)} inf/s`,
      });
    }
    const delayUs = chosen.dynamicBatching?.maxQueueDelayUs ?? 0;
    // A batch execution is what the node measured for this window's batches (compute input + infer +
    // output per request, which in Triton's statistics is the whole execution of the request's batch):
    // the time a request that just missed a batch really waits for. The ceiling's time for the same
    // batch size is smaller (no server around it); it is reported beside it, not used for the bound.
    const executionUs = served.server.computeInputUs + served.server.computeInferUs + served.server.computeOutputUs;
    const ceilingUs = batchExecutionUs(ceiling, served.server.avgBatchSize);
    const boundUs = delayUs + 2 * executionUs;
    targets.push({
      protocol,
      name: 'p99 <= delay + 2 x batch exec',
      value: served.latency.p99Us / 1000,
      threshold: boundUs / 1000,
      pass: served.latency.p99Us <= boundUs,
      detail:
        `p99 ${(served.latency.p99Us / 1000).toFixed(1)} ms vs ${(delayUs / 1000).toFixed(1)} + 2 x ${(executionUs / 1000).toFixed(1)} ms ` +
        `(avg batch ${served.server.avgBatchSize.toFixed(1)}; the node's measured execution, ${(ceilingUs / 1000).toFixed(1)} ms in the ceiling)`,
    });
  }
  return targets;
}

const ms = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(1) : '-');
const ratio = (x: number | undefined): string => (x !== undefined && Number.isFinite(x) ? `${x.toFixed(2)}x` : '-');

function resultsTable(
  ceiling: CeilingResult,
  batched: readonly LoadPoint[],
  unbatched: readonly LoadPoint[],
  simple: readonly LoadPoint[],
): string {
  const ceilingRows = ceiling.points.map((p) => [
    `ceiling b=${p.batchSize}`,
    '-',
    '-',
    p.inferencesPerSec.toFixed(1),
    ms(p.execP50Us),
    '-',
    ms(p.execP99Us),
    String(p.batchSize),
    ratio(p.inferencesPerSec / ceiling.best.inferencesPerSec),
    '-',
    `-+${p.cpuUsPerInference.toFixed(0)}+-`,
    '',
  ]);
  const row = (p: LoadPoint): string[] => {
    const plain = unbatched.find((u) => u.protocol === p.protocol && u.concurrency === p.concurrency);
    const isBatched = batched.includes(p);
    return [
      `${p.model} ${p.setup}`,
      p.protocol,
      String(p.concurrency),
      p.inferencesPerSec.toFixed(1),
      ms(p.latency.p50Us),
      ms(p.latency.p90Us),
      ms(p.latency.p99Us),
      Number.isFinite(p.server.avgBatchSize) ? p.server.avgBatchSize.toFixed(1) : '-',
      p.model === MLP_MODEL ? ratio(p.inferencesPerSec / ceiling.best.inferencesPerSec) : '-',
      isBatched ? ratio(plain === undefined ? undefined : p.inferencesPerSec / plain.inferencesPerSec) : '-',
      p.cpu === undefined ? '-' : [p.cpu.nodeMainUs, p.cpu.nodeOtherUs, p.cpu.clientUs].map((us) => us.toFixed(0)).join('+'),
      p.errors > 0 ? `${p.errors} errors` : '',
    ];
  };
  return formatTable(
    ['setup', 'proto', 'conc', 'inf/s', 'p50 ms', 'p90 ms', 'p99 ms', 'avg batch', 'served/ceiling', 'batched/unbatched', 'CPU us/inf loop+ort+client', 'note'],
    [...ceilingRows, ...[...batched, ...unbatched, ...simple].map(row)],
  );
}

export async function runBatchingScenario(options: BenchOptions): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const cores = availableParallelism();
  const concurrencies = options.concurrencies ?? (options.quick ? QUICK_CONCURRENCIES : CONCURRENCIES);
  const { warmupS, durationS } = options;
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
  const nodes = new Set<RunningNode>();
  const withNode = async <T>(repo: string, models: readonly string[], body: (node: RunningNode) => Promise<T>): Promise<T> => {
    const node = await startNode(repo, models);
    nodes.add(node);
    try {
      return await body(node);
    } finally {
      await node.stop();
      nodes.delete(node);
    }
  };

  try {
    log(`writing example models into ${work}`);
    const baseRepo = join(work, 'base');
    await writeExampleRepository(baseRepo, { only: [MLP_MODEL, SIMPLE_MODEL] });

    // 0. Per core (the headline): node on core 0, load on core 1, the one-thread ceiling before and after.
    const perCore: PerCoreReport = await runPerCore(options, work, baseRepo);

    // 1. Ceiling, with nothing else running.
    log(`ceiling: onnxruntime-node, ${cores} intra-op threads, batch sizes ${CEILING_BATCH_SIZES.join(', ')}`);
    const ceiling = await measureOrtCeiling({
      modelPath: join(baseRepo, MLP_MODEL, '1', 'model.onnx'),
      inputName: MLP_INPUT,
      rowShape: [MLP_WIDTH],
      intraOpThreads: cores,
      batchSizes: CEILING_BATCH_SIZES,
      warmupMs: options.quick ? 200 : 500,
      measureMs: options.quick ? 500 : 2000,
    });
    for (const p of ceiling.points) {
      log(`  b=${p.batchSize}: ${p.inferencesPerSec.toFixed(1)} inf/s, one run ${ms(p.execAvgUs)} ms avg (${p.runs} runs)`);
    }

    // 2a. Pick the batching config: a short gRPC run at the target concurrency for each candidate.
    const fullBatch = ceiling.points.find((p) => p.batchSize === Math.max(...CEILING_BATCH_SIZES));
    const candidates = batchingCandidates(cores, fullBatch?.execAvgUs);
    const tuning: { setup: MlpSetup; config: string; point: LoadPoint }[] = [];
    let chosen = candidates[0] as MlpSetup;
    if (options.quick || candidates.length === 1) {
      log(`tuning skipped (quick run): using '${chosen.id}'`);
    } else {
      log(`tuning: ${candidates.map((c) => c.id).join(', ')} over gRPC at concurrency ${TARGET_CONCURRENCY}`);
      for (const setup of candidates) {
        const repo = await writeSetupRepository(work, baseRepo, setup, false);
        const point = await withNode(repo, [MLP_MODEL], (node) =>
          measureLoad({
            node,
            setup: setup.id,
            protocol: 'grpc',
            concurrency: TARGET_CONCURRENCY,
            request: mlpRequest(),
            outputBytes: MLP_WIDTH * 4,
            warmupS: Math.min(warmupS, 1),
            durationS: Math.min(durationS, 3),
          }),
        );
        tuning.push({ setup, config: mlpConfigText(setup), point });
      }
      // Highest throughput wins; errors disqualify.
      const ok = tuning.filter((t) => t.point.errors === 0);
      const best = (ok.length > 0 ? ok : tuning).reduce((a, b) => (b.point.inferencesPerSec > a.point.inferencesPerSec ? b : a));
      chosen = best.setup;
      log(`chosen: '${chosen.id}'`);
    }
    const plainSetup = withoutBatching(chosen);

    // 2b, 3. The chosen config with and without dynamic batching, over both protocols.
    const series = async (setup: MlpSetup, label: string, withSimple: boolean) => {
      const repo = await writeSetupRepository(work, baseRepo, setup, withSimple);
      return withNode(repo, withSimple ? [MLP_MODEL, SIMPLE_MODEL] : [MLP_MODEL], async (node) => {
        const points: LoadPoint[] = [];
        for (const protocol of PROTOCOLS) {
          for (const concurrency of concurrencies) {
            const base = { node, setup: label, protocol, concurrency, warmupS, durationS };
            points.push(await measureLoad({ ...base, request: mlpRequest(), outputBytes: MLP_WIDTH * 4 }));
          }
        }
        // 4. simple, on the node without batching: per-request overhead of each protocol.
        const simple: LoadPoint[] = [];
        if (withSimple) {
          for (const protocol of PROTOCOLS) {
            for (const concurrency of SIMPLE_CONCURRENCIES) {
              const base = { node, setup: 'default', protocol, concurrency, warmupS: warmupS / 2, durationS: durationS / 2 };
              simple.push(await measureLoad({ ...base, request: simpleRequest(), outputBytes: 16 * 4 }));
            }
          }
        }
        return { points, simple };
      });
    };
    log(`batched: '${chosen.id}'`);
    const batched = (await series(chosen, 'batched', false)).points;
    log(`unbatched: '${plainSetup.id}' (and simple)`);
    const { points: unbatched, simple } = await series(plainSetup, 'unbatched', true);

    const targets = evaluateTargets(ceiling, chosen, batched, unbatched);
    const elapsedS = (performance.now() - t0) / 1000;
    const json = {
      scenario: 'batching',
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      startedAt: started.toISOString(),
      elapsedS,
      machine: machineInfo(),
      options: { warmupS, durationS, quick: options.quick, concurrencies, simpleConcurrencies: SIMPLE_CONCURRENCIES },
      ceiling,
      tuning: tuning.map((t) => ({ setup: t.setup, config: t.config, point: t.point })),
      chosen: { setup: chosen, config: mlpConfigText(chosen) },
      unbatched: { setup: plainSetup, config: mlpConfigText(plainSetup) },
      points: [...batched, ...unbatched, ...simple],
      targets,
      perCore,
      notes: [
        'Client Send/Recv are this process encoding the request and decoding the response (codec time), not socket time.',
        'Server columns are averages per request from /v2/models/{m}/stats deltas over the measurement window.',
        "CPU us/inf: the node's event loop + its other threads (onnxruntime's above all) + the load generator, CPU microseconds per inference over the window (/proc); in a ceiling row, onnxruntime's process alone.",
        `The ceiling is one onnxruntime-node session with ${cores} intra-op threads (the total the node configs use).`,
        'The load generator shares the machine with the node; the ceiling had the machine to itself.',
      ],
    };
    const paths = await writeResults(options.outRoot ?? DEFAULT_RESULTS_ROOT, 'batching', started, json, toPerfCsv(json.points));

    const out: string[] = [];
    out.push(`batching: mlp_large, ${cores} cores, ${warmupS} s warm-up + ${durationS} s per point, ${elapsedS.toFixed(0)} s total`);
    if (tuning.length > 0) {
      out.push(
        `tuning (gRPC c=${TARGET_CONCURRENCY}): ` +
          tuning.map((t) => `${t.setup.id} ${t.point.inferencesPerSec.toFixed(1)} inf/s p99 ${ms(t.point.latency.p99Us)} ms`).join('; '),
      );
    }
    out.push('per core (node on core 0, load generator on core 1; CPU us per inference):');
    out.push(perCore.table ?? `  skipped: ${perCore.skipped ?? ''}`, '', 'whole box:');
    out.push(`chosen config ('${chosen.id}'):`, ...mlpConfigText(chosen).trimEnd().split('\n').map((l) => `  ${l}`));
    out.push('', resultsTable(ceiling, batched, unbatched, simple));
    out.push('(ceiling rows: back-to-back session.run at that batch size; p50/p99 are one run\'s time)', '');
    for (const t of targets) out.push(`${t.pass ? 'PASS' : 'MISS'}  ${t.protocol.padEnd(4)} c=${TARGET_CONCURRENCY}  ${t.name}: ${t.detail}`);
    if (targets.length === 0) out.push(`targets not evaluated: concurrency ${TARGET_CONCURRENCY} was not measured`);
    out.push('', `results: ${paths.json}`, `         ${paths.csv}`);
    process.stdout.write(`${out.join('\n')}\n`);
    const errors = json.points.reduce((n, p) => n + p.errors, 0);
    if (errors > 0) log(`${errors} requests failed; see the JSON's firstError fields`);
    return errors > 0 ? 1 : 0;
  } finally {
    for (const node of nodes) await node.stop();
    await rm(work, { recursive: true, force: true });
  }
}
