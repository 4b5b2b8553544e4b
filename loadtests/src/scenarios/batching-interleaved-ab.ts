/**
 * Two builds of the node, A and B, served `simple` per core in short windows taken in turns (A B, B A,
 * A B, ...), both nodes up the whole time on core 0 and the load generator (this process) on core 1.
 * On a box shared with other work the per-core figures move by several times within minutes; taking
 * the two builds' windows in turns exposes both to the same moments, so their medians compare where two
 * runs of `batching-per-core` minutes apart do not.
 *
 *   node --import tsx loadtests/src/scenarios/batching-interleaved-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]
 *
 * A bundle dir is a `npm run build` output (dist/); each node runs from its own (TESSERA_BUNDLE_DIR).
 * AB_NODE_FLAGS_A / AB_NODE_FLAGS_B add node flags to one side (the same bundle twice compares a flag).
 * `+ARG` after a bundle dir: a tessera-node argument for that side (e.g. `/tmp/b/dist+--grpc-raw-h2=true`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { runClosedLoop } from '../lib/load/closed-loop.js';
import { perCoreSupport, pinProcess, readThreadCpu, type ThreadCpu } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { int32Tensor } from './batching-requests.js';
import { splitThreads, type ThreadSplit } from './batching-per-core.js';
import { median } from '../lib/sampling/percentiles.js';

const CONCURRENCY = 16;
const PROTOCOLS = ['http', 'grpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];

interface Window {
  readonly build: 'A' | 'B';
  readonly protocol: Protocol;
  readonly round: number;
  readonly perSec: number;
  readonly node: ThreadSplit;
  readonly errors: number;
}

const request: InferRequest = { id: '', modelName: 'simple', inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)], parameters: {} };

async function window(node: RunningNode, protocol: Protocol, seconds: number): Promise<Omit<Window, 'build' | 'protocol' | 'round'>> {
  const client: InferClient = protocol === 'http' ? createHttpInferClient('127.0.0.1', node.httpPort, CONCURRENCY) : createGrpcInferClient('127.0.0.1', node.grpcPort);
  let threads: ThreadCpu[] = [];
  let split: ThreadSplit | undefined;
  try {
    const run = await runClosedLoop({
      concurrency: CONCURRENCY,
      warmupMs: 500,
      measureMs: seconds * 1000,
      call: async () => {
        const result = await client.infer(request);
        if (result.response.outputs[0]?.data.length !== 64) throw new Error('unexpected answer');
        return result;
      },
      onWindowStart: async () => {
        threads = await readThreadCpu(node.pid);
      },
      onWindowEnd: async () => {
        split = splitThreads(threads, await readThreadCpu(node.pid), node.pid, 1);
      },
    });
    const count = run.completed;
    const per = (us: number): number => us / Math.max(1, count);
    const s = split!;
    return {
      perSec: run.requestsPerSec,
      node: { totalUs: per(s.totalUs), eventLoopUs: per(s.eventLoopUs), onnxruntimeUs: per(s.onnxruntimeUs), helpersUs: per(s.helpersUs) },
      errors: run.errors,
    };
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const [aDir, bDir, roundsText = '6', windowText = '4', out] = process.argv.slice(2);
  if (aDir === undefined || bDir === undefined) throw new Error('usage: batching-interleaved-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]');
  const support = perCoreSupport();
  if (!support.ok) {
    process.stdout.write(`skipped: ${support.why}\n`);
    return;
  }
  const rounds = Number(roundsText);
  const seconds = Number(windowText);
  const work = await mkdtemp(join(tmpdir(), 'tessera-ab-'));
  const nodes: Record<'A' | 'B', RunningNode | undefined> = { A: undefined, B: undefined };
  try {
    await writeExampleRepository(work, { only: ['simple'] });
    for (const [build, dirWithArgs] of [['A', aDir], ['B', bDir]] as const) {
      const [dir, ...extraArgs] = dirWithArgs.split('+');
      process.env.TESSERA_BUNDLE_DIR = dir;
      // AB_NODE_FLAGS_A / AB_NODE_FLAGS_B: node flags for one side (space-separated), e.g. one bundle against itself with a GC setting.
      const nodeFlags = (process.env[`AB_NODE_FLAGS_${build}`] ?? '').split(' ').filter((flag) => flag !== '');
      nodes[build] = await launchNode({ modelRepository: work, pinCore: 0, nodeFlags, extraArgs });
      await waitForModelReady(nodes[build]!.httpBase, 'simple');
    }
    pinProcess(process.pid, 1);
    const windows: Window[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const);
      for (const protocol of PROTOCOLS) {
        for (const build of order) {
          const w = await window(nodes[build]!, protocol, seconds);
          windows.push({ build, protocol, round, ...w });
          process.stderr.write(`round ${round} ${protocol} ${build}: ${w.perSec.toFixed(0)} req/s, node ${w.node.totalUs.toFixed(0)} us/req (loop ${w.node.eventLoopUs.toFixed(0)})\n`);
        }
      }
    }
    const lines = ['| proto | build | median req/s | median node us/req | median loop us | median busiest other thread us | windows |', '| --- | --- | --- | --- | --- | --- | --- |'];
    for (const protocol of PROTOCOLS) {
      for (const build of ['A', 'B'] as const) {
        const mine = windows.filter((w) => w.build === build && w.protocol === protocol);
        lines.push(
          `| ${protocol} | ${build} | ${median(mine.map((w) => w.perSec)).toFixed(0)} | ${median(mine.map((w) => w.node.totalUs)).toFixed(0)} | ` +
            `${median(mine.map((w) => w.node.eventLoopUs)).toFixed(0)} | ${median(mine.map((w) => w.node.onnxruntimeUs)).toFixed(0)} | ${mine.length} |`,
        );
      }
    }
    const table = lines.join('\n');
    process.stdout.write(`A = ${aDir}\nB = ${bDir}\n${table}\n`);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), a: aDir, b: bDir, rounds, windowS: seconds, concurrency: CONCURRENCY, windows, table }, null, 2)}\n`);
  } finally {
    await Promise.all([nodes.A?.stop(), nodes.B?.stop()]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
