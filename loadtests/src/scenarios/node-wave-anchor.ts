/**
 * Issue 18's anchor for the node's event loop under the `mlp_large` `[64]` wave: tessera-node against a bare
 * node:http / node:http2 server doing the same I/O (node-wave-anchor-server.mjs: reads the 4 KB FP32 request,
 * batches 64, runs onnxruntime with one intra-op thread in a worker, answers 64 × 4 KB), each alone on core 0
 * with h2load on core 1, in turns (the order rotates each round). Per turn: served/s and CPU per inference by
 * thread, the main thread (event loop) first: the node's main thread minus the anchor's is what our code
 * costs on top of node's servers. A third server takes turns: `anchor-raw`, the same wave over a plain net.Server
 * with a minimal HTTP/1.1 reader (HTTP) or a minimal HTTP/2 reader (gRPC), so anchor − anchor-raw is what node:http
 * or node:http2 itself costs.
 *
 *   node --import tsx loadtests/src/scenarios/node-wave-anchor.ts BUNDLE_DIR[+ARG...][,BUNDLE_DIR...] [ROUNDS] [SECONDS] [OUT.json]
 *
 * `+ARG` after a bundle: a tessera-node argument for that node only (e.g. `/tmp/b/dist+--grpc-raw-h2=true`).
 *
 * WAVE_ANCHOR_SPIN_US=N: the anchor's worker spins N µs per row instead of running onnxruntime.
 * WAVE_ANCHOR_PROTOCOLS=http|grpc: one protocol only.
 * WAVE_ANCHOR_NODE_FLAGS='...': node flags for the nodes and the anchors (e.g. `--cpu-prof --cpu-prof-dir=DIR`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import { checkedInferCall } from '../lib/load/checked-infer.js';
import { grpcInferTarget, h2loadAvailable, httpBinaryInferTarget, runH2load } from '../lib/load/h2load-loop.js';
import { perCoreSupport, pinnedCommand, pinProcess, readThreadCpu, type ThreadCpu } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { launchServer, logLineFields } from '../lib/processes/server-process.js';
import { fetchModelStats } from '../lib/sampling/node-stats.js';
import { median } from '../lib/sampling/percentiles.js';
import { splitThreads, type ThreadSplit } from './batching-per-core.js';
import { MLP_INPUT, MLP_MODEL, MLP_OUTPUT, MLP_WIDTH, mlpConfigText } from './batching-configs.js';
import { fp32Tensor } from './batching-requests.js';

const ALL_PROTOCOLS = ['http', 'grpc'] as const;
type Protocol = (typeof ALL_PROTOCOLS)[number];
/** WAVE_ANCHOR_PROTOCOLS=http (or grpc): one protocol only (profiling one path). */
const PROTOCOLS = ALL_PROTOCOLS.filter((p) => (process.env.WAVE_ANCHOR_PROTOCOLS ?? 'http,grpc').split(',').includes(p));
const CONCURRENCY = 64;
const WARMUP_MS = 3000;
const ANCHOR_SCRIPT = fileURLToPath(new URL('./node-wave-anchor-server.mjs', import.meta.url));
const request: InferRequest = { id: '', modelName: MLP_MODEL, inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)], outputs: [{ name: MLP_OUTPUT }], parameters: {} };
const log = (message: string): void => void process.stderr.write(`${message}\n`);

const nodeFlags = (): string[] => (process.env.WAVE_ANCHOR_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

/** Something on core 0 that serves the wave: its pid, ports, and a count of inferences answered. */
interface Counts {
  readonly inferences: number;
  readonly batches: number;
}

interface Server {
  readonly name: string;
  readonly pid: number;
  readonly port: (protocol: Protocol) => number;
  /** Inferences answered and batches run so far. */
  readonly counts: () => Promise<Counts>;
  readonly stop: () => Promise<void>;
}

/** `raw` and `raw-grpc` are the anchors over our own minimal HTTP/1.1 and HTTP/2 readers, both named anchor-raw. */
async function startAnchor(protocol: Protocol | 'raw' | 'raw-grpc', modelPath: string): Promise<Server> {
  const spin = process.env.WAVE_ANCHOR_SPIN_US;
  const env: Record<string, string> = spin === undefined ? { ANCHOR_MODEL: modelPath } : { ANCHOR_SPIN_US: spin };
  const server = await launchServer({ name: `anchor ${protocol}`, args: [...nodeFlags(), ANCHOR_SCRIPT, protocol], startedMsg: 'anchor started', env, wrap: (cmd, args) => pinnedCommand(0, cmd, args) });
  const started = server.recentLog().map((line) => logLineFields(line, 'anchor started')).find((f) => f !== undefined);
  const statsPort = Number(started?.statsPort);
  return {
    name: protocol === 'raw-grpc' ? 'anchor-raw' : `anchor-${protocol}`,
    pid: server.pid,
    port: () => server.port,
    counts: async () => (await (await fetch(`http://127.0.0.1:${statsPort}/`)).json()) as Counts,
    stop: () => server.stop(),
  };
}

async function startNode(bundleWithArgs: string, repo: string, index: number): Promise<Server> {
  const [bundle, ...extraArgs] = bundleWithArgs.split('+');
  process.env.TESSERA_BUNDLE_DIR = bundle;
  const node = await launchNode({ modelRepository: repo, pinCore: 0, nodeFlags: nodeFlags(), extraArgs });
  await waitForModelReady(node.httpBase, MLP_MODEL);
  return {
    name: `node${index}`,
    pid: node.pid,
    port: (protocol) => (protocol === 'http' ? node.httpPort : node.grpcPort),
    counts: async () => {
      const stats = await fetchModelStats(node.httpBase, MLP_MODEL);
      return { inferences: stats.inference_count, batches: stats.execution_count };
    },
    stop: () => node.stop(),
  };
}

interface Turn {
  readonly server: string;
  readonly protocol: Protocol;
  readonly round: number;
  readonly inferences: number;
  /** Inferences per batch run in the window. */
  readonly meanBatch: number;
  readonly servedPerSec: number;
  readonly threads: ThreadSplit;
  readonly clientUs: number;
  readonly failed: number;
}

async function turn(server: Server, protocol: Protocol, round: number, seconds: number): Promise<Turn> {
  const port = server.port(protocol);
  const client = protocol === 'http' ? createHttpInferClient('127.0.0.1', port, 1) : createGrpcInferClient('127.0.0.1', port);
  try {
    await checkedInferCall(client, request, MLP_WIDTH * 4)();
  } finally {
    await client.close();
  }
  const target = protocol === 'http' ? httpBinaryInferTarget('127.0.0.1', port, request) : grpcInferTarget('127.0.0.1', port, request);
  const bodyDir = await mkdtemp(join(tmpdir(), 'wave-anchor-'));
  let cpu: ThreadCpu[][] = [];
  let counts: Counts[] = [];
  const run = await runH2load(
    { target, bodyPath: join(bodyDir, 'request.body'), concurrency: CONCURRENCY, warmupMs: WARMUP_MS, measureMs: seconds * 1000, core: 1 },
    {
      onWindowStart: async () => {
        cpu = [await readThreadCpu(server.pid)];
        counts = [await server.counts()];
      },
      onWindowEnd: async () => {
        cpu.push(await readThreadCpu(server.pid));
        counts.push(await server.counts());
      },
    },
  ).finally(() => rm(bodyDir, { recursive: true, force: true }));
  const inferences = counts[1]!.inferences - counts[0]!.inferences;
  return {
    server: server.name,
    protocol,
    round,
    inferences,
    meanBatch: inferences / (counts[1]!.batches - counts[0]!.batches),
    servedPerSec: inferences / run.windowS,
    threads: splitThreads(cpu[0]!, cpu[1]!, server.pid, inferences),
    clientUs: run.clientCpuUs / inferences,
    failed: run.failed,
  };
}

function table(turns: readonly Turn[], names: readonly string[]): string {
  const lines = [
    '| proto | server | served/s | main thread µs/inf | busiest other (onnxruntime) | helpers | total | main − anchor | turns |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const protocol of PROTOCOLS) {
    const mine = (name: string): Turn[] => turns.filter((t) => t.protocol === protocol && t.server === name);
    const anchorLoop = median(mine(`anchor-${protocol}`).map((t) => t.threads.eventLoopUs));
    for (const name of names) {
      const own = mine(name === 'anchor' ? `anchor-${protocol}` : name);
      if (own.length === 0) continue;
      const m = (f: (t: Turn) => number): string => median(own.map(f)).toFixed(0);
      const loop = median(own.map((t) => t.threads.eventLoopUs));
      lines.push(
        `| ${protocol} | ${name} | ${m((t) => t.servedPerSec)} | ${loop.toFixed(0)} | ${m((t) => t.threads.onnxruntimeUs)} | ${m((t) => t.threads.helpersUs)} | ` +
          `${m((t) => t.threads.totalUs)} | ${(loop - anchorLoop).toFixed(0)} | ${own.length} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [bundlesText, roundsText = '3', secondsText = '10', out] = process.argv.slice(2);
  if (bundlesText === undefined) throw new Error('usage: node-wave-anchor.ts BUNDLE_DIR[,BUNDLE_DIR...] [ROUNDS] [SECONDS] [OUT.json]');
  if (!perCoreSupport().ok || !h2loadAvailable()) throw new Error('needs two cores, taskset and h2load');
  const bundles = bundlesText.split(',');
  const rounds = Number(roundsText);
  const seconds = Number(secondsText);
  const work = await mkdtemp(join(tmpdir(), 'tessera-wave-anchor-'));
  const servers: Server[] = [];
  try {
    await writeExampleRepository(work, { only: [MLP_MODEL] });
    const setup = { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: 60_000 } };
    await writeFile(join(work, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
    const modelPath = join(work, MLP_MODEL, '1', 'model.onnx');
    const anchors = { http: await startAnchor('http', modelPath), grpc: await startAnchor('grpc', modelPath) };
    const rawAnchors = { http: await startAnchor('raw', modelPath), grpc: await startAnchor('raw-grpc', modelPath) };
    servers.push(anchors.http, anchors.grpc, rawAnchors.http, rawAnchors.grpc);
    for (const [i, bundle] of bundles.entries()) servers.push(await startNode(bundle, work, i));
    const nodes = servers.slice(4);
    pinProcess(process.pid, 1);
    const turns: Turn[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const protocol of PROTOCOLS) {
        const lineup = [anchors[protocol], rawAnchors[protocol], ...nodes];
        const shift = (round - 1) % lineup.length;
        for (const server of [...lineup.slice(shift), ...lineup.slice(0, shift)]) {
          const t = await turn(server, protocol, round, seconds);
          turns.push(t);
          log(
            `round ${round} ${protocol} ${t.server}: ${t.servedPerSec.toFixed(0)} inf/s, batch ${t.meanBatch.toFixed(1)}, main ${t.threads.eventLoopUs.toFixed(0)} µs/inf, ` +
              `other ${t.threads.onnxruntimeUs.toFixed(0)}, helpers ${t.threads.helpersUs.toFixed(0)}, h2load ${t.clientUs.toFixed(0)}, failed ${t.failed}`,
          );
        }
      }
    }
    const names = ['anchor', 'anchor-raw', ...nodes.map((n) => n.name)];
    const text = `${bundles.map((b, i) => `node${i} = ${b}`).join('\n')}\n${table(turns, names)}\n`;
    process.stdout.write(text);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), bundles, rounds, seconds, concurrency: CONCURRENCY, turns, table: text }, null, 2)}\n`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
