/**
 * Bytes the node allocates per `simple` request, two builds A and B side by side: each node runs with
 * `--trace-gc-nvp`, and the `allocated=` of every garbage collection during a fixed number of requests
 * is summed. Unlike req/s or CPU per request on a shared box, this count does not move with the load
 * of other processes, so it shows a cut in allocation where a few percent of CPU would be lost in noise.
 * A small young generation (1 MiB semi-spaces) makes collections frequent, so the bytes allocated after
 * the last one (not counted) are a small share. CPU per request (all threads) is taken in the same turns,
 * with the collections' own pause time per request (`pause=`, wall time on core 0) and the RSS after each turn.
 * ALLOC_AB_SEMI_MB_A / ALLOC_AB_SEMI_MB_B set one side's semi-space size in MiB (default 1; `default`: V8's own
 * sizing, no flag): the same bundle twice then compares young generations (GC saved against RSS spent).
 *
 * ALLOC_AB_NODE_FLAGS_A / ALLOC_AB_NODE_FLAGS_B add node flags to one side (space-separated).
 * ALLOC_AB_MODEL=mlp_large drives the 64-request wave instead (issue 18): mlp_large with `preferred_batch_size: [64]`,
 * one instance, one intra-op thread, 64 callers of one 4 KB FP32 row each; each turn also splits the node's
 * CPU per inference by thread (event loop, the busiest other thread: onnxruntime's, the rest: helpers).
 *
 *   node --import tsx loadtests/src/scenarios/node-alloc-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [REQUESTS] [OUT.json]
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sendClosedLoop } from '../lib/load/closed-loop.js';
import { perCoreSupport, pinProcess, readThreadCpu } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { fp32Tensor, int32Tensor } from './batching-requests.js';
import { median } from '../lib/sampling/percentiles.js';
import { splitThreads, type ThreadSplit } from './batching-per-core.js';
import { MLP_INPUT, MLP_MODEL, MLP_OUTPUT, MLP_WIDTH, mlpConfigText } from './batching-configs.js';

const PROTOCOLS = ['http', 'grpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** The wave: as batching-per-core's `mlp_large pref64` case (its delay: twice one batch of 64 on this box, whole ms). */
const WAVE = process.env.ALLOC_AB_MODEL === 'mlp_large';
const WAVE_DELAY_US = 60_000;
const CONCURRENCY = WAVE ? 64 : 16;
const MODEL = WAVE ? MLP_MODEL : 'simple';
const OUTPUT_BYTES = WAVE ? MLP_WIDTH * 4 : 64;

const request: InferRequest = WAVE
  ? { id: '', modelName: MLP_MODEL, inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)], outputs: [{ name: MLP_OUTPUT }], parameters: {} }
  : { id: '', modelName: 'simple', inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)], parameters: {} };

interface Counted {
  node: RunningNode;
  allocated: number;
  collections: number;
  /** Mark-compacts (`gc=mc`) of the main isolate, and of the others (the worker threads'). */
  markCompacts: number;
  workerMarkCompacts: number;
  /** The first isolate that reports a collection: the main thread's (it collects while loading, before any worker starts). */
  mainIsolate?: string;
  pauseMs: number;
}

interface Turn {
  readonly build: 'A' | 'B';
  readonly protocol: Protocol;
  readonly round: number;
  readonly requests: number;
  readonly bytesPerRequest: number;
  readonly collectionsPer1000: number;
  readonly markCompactsPer1000: number;
  readonly workerMarkCompactsPer1000: number;
  readonly cpuUsPerRequest: number;
  readonly gcPauseUsPerRequest: number;
  readonly rssMiB: number;
  /** Node CPU per request by thread. */
  readonly threads: ThreadSplit;
}

async function rssMiB(pid: number): Promise<number> {
  const match = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

async function drive(client: InferClient, count: number): Promise<void> {
  await sendClosedLoop(count, CONCURRENCY, async () => {
    const result = await client.infer(request);
    if (result.response.outputs[0]?.data.length !== OUTPUT_BYTES) throw new Error('unexpected answer');
  });
}

async function turn(counted: Counted, protocol: Protocol, count: number): Promise<Omit<Turn, 'build' | 'protocol' | 'round'>> {
  const node = counted.node;
  const client: InferClient = protocol === 'http' ? createHttpInferClient('127.0.0.1', node.httpPort, CONCURRENCY) : createGrpcInferClient('127.0.0.1', node.grpcPort);
  try {
    await drive(client, 500);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const bytes0 = counted.allocated;
    const gcs0 = counted.collections;
    const mcs0 = counted.markCompacts;
    const workerMcs0 = counted.workerMarkCompacts;
    const pause0 = counted.pauseMs;
    const cpu0 = await readThreadCpu(node.pid);
    await drive(client, count);
    const cpu1 = await readThreadCpu(node.pid);
    // The last collections' lines reach us a moment later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const cpuSeconds = (threads: typeof cpu0): number => threads.reduce((sum, t) => sum + t.cpuSeconds, 0);
    return {
      requests: count,
      bytesPerRequest: (counted.allocated - bytes0) / count,
      collectionsPer1000: ((counted.collections - gcs0) * 1000) / count,
      markCompactsPer1000: ((counted.markCompacts - mcs0) * 1000) / count,
      workerMarkCompactsPer1000: ((counted.workerMarkCompacts - workerMcs0) * 1000) / count,
      cpuUsPerRequest: ((cpuSeconds(cpu1) - cpuSeconds(cpu0)) * 1e6) / count,
      threads: splitThreads(cpu0, cpu1, node.pid, count),
      gcPauseUsPerRequest: ((counted.pauseMs - pause0) * 1000) / count,
      rssMiB: await rssMiB(node.pid),
    };
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const [aDir, bDir, roundsText = '3', requestsText = '20000', out] = process.argv.slice(2);
  if (aDir === undefined || bDir === undefined) throw new Error('usage: node-alloc-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [REQUESTS] [OUT.json]');
  const pinned = perCoreSupport().ok;
  const rounds = Number(roundsText);
  const count = Number(requestsText);
  const work = await mkdtemp(join(tmpdir(), 'tessera-alloc-ab-'));
  const nodes: Partial<Record<'A' | 'B', Counted>> = {};
  try {
    await writeExampleRepository(work, { only: [MODEL] });
    if (WAVE) {
      const setup = { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: WAVE_DELAY_US } };
      await writeFile(join(work, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
    }
    for (const [build, dir] of [['A', aDir], ['B', bDir]] as const) {
      process.env.TESSERA_BUNDLE_DIR = dir;
      const counted: Counted = {
        node: undefined as unknown as RunningNode,
        allocated: 0,
        collections: 0,
        markCompacts: 0,
        workerMarkCompacts: 0,
        pauseMs: 0,
      };
      const semiMiB = process.env[`ALLOC_AB_SEMI_MB_${build}`] ?? '1';
      counted.node = await launchNode({
        modelRepository: work,
        ...(pinned ? { pinCore: 0 } : {}),
        // 'default': V8's own sizing, as the node runs without flags.
        nodeFlags: [
          '--trace-gc-nvp',
          ...(process.env[`ALLOC_AB_NODE_FLAGS_${build}`] ?? '').split(' ').filter((flag) => flag !== ''),
          ...(semiMiB === 'default' ? [] : [`--max-semi-space-size=${semiMiB}`, `--min-semi-space-size=${semiMiB}`]),
        ],
        onStdoutLine: (line) => {
          const match = / allocated=(\d+) /.exec(line);
          if (match === null) return;
          counted.allocated += Number(match[1]);
          counted.collections += 1;
          const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
          counted.mainIsolate ??= isolate;
          if (/ gc=mc /.test(line)) {
            if (isolate === counted.mainIsolate) counted.markCompacts += 1;
            else counted.workerMarkCompacts += 1;
          }
          counted.pauseMs += Number(/pause=([\d.]+)/.exec(line)?.[1] ?? 0);
        },
      });
      await waitForModelReady(counted.node.httpBase, MODEL);
      nodes[build] = counted;
    }
    if (pinned) pinProcess(process.pid, 1);
    const turns: Turn[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const);
      for (const protocol of PROTOCOLS) {
        for (const build of order) {
          const t = await turn(nodes[build]!, protocol, count);
          turns.push({ build, protocol, round, ...t });
          process.stderr.write(
            `round ${round} ${protocol} ${build}: ${t.bytesPerRequest.toFixed(0)} B/req, ${t.collectionsPer1000.toFixed(1)} GCs/1000 req ` +
              `(mark-compacts ${t.markCompactsPer1000.toFixed(2)} main, ${t.workerMarkCompactsPer1000.toFixed(2)} workers), ` +
              `${t.cpuUsPerRequest.toFixed(0)} us/req (loop ${t.threads.eventLoopUs.toFixed(0)}, busiest other ${t.threads.onnxruntimeUs.toFixed(0)}, ` +
              `helpers ${t.threads.helpersUs.toFixed(0)}), GC pause ${t.gcPauseUsPerRequest.toFixed(1)} us/req, RSS ${t.rssMiB.toFixed(0)} MiB\n`,
          );
        }
      }
    }
    const lines = [
      `${MODEL}, concurrency ${CONCURRENCY}`,
      '| proto | build | median bytes allocated/req | median GCs per 1000 req | mark-compacts per 1000 req, main / workers | median node CPU us/req | loop | busiest other | helpers | median GC pause us/req | median RSS MiB | turns |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const protocol of PROTOCOLS) {
      for (const build of ['A', 'B'] as const) {
        const mine = turns.filter((t) => t.build === build && t.protocol === protocol);
        lines.push(
          `| ${protocol} | ${build} | ${median(mine.map((t) => t.bytesPerRequest)).toFixed(0)} | ${median(mine.map((t) => t.collectionsPer1000)).toFixed(1)} | ` +
            `${median(mine.map((t) => t.markCompactsPer1000)).toFixed(2)} / ${median(mine.map((t) => t.workerMarkCompactsPer1000)).toFixed(2)} | ` +
            `${median(mine.map((t) => t.cpuUsPerRequest)).toFixed(0)} | ${median(mine.map((t) => t.threads.eventLoopUs)).toFixed(0)} | ` +
            `${median(mine.map((t) => t.threads.onnxruntimeUs)).toFixed(0)} | ${median(mine.map((t) => t.threads.helpersUs)).toFixed(0)} | ` +
            `${median(mine.map((t) => t.gcPauseUsPerRequest)).toFixed(1)} | ` +
            `${median(mine.map((t) => t.rssMiB)).toFixed(0)} | ${mine.length} |`,
        );
      }
    }
    const table = lines.join('\n');
    process.stdout.write(`A = ${aDir}\nB = ${bDir}\n${table}\n`);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), model: MODEL, a: aDir, b: bDir, rounds, requests: count, concurrency: CONCURRENCY, turns, table }, null, 2)}\n`);
  } finally {
    await Promise.all([nodes.A?.node.stop(), nodes.B?.node.stop()]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
