/**
 * Where the node's bytes per `simple` request go: one process holds a node (core + HTTP server + gRPC
 * server, from the sources) over the example `simple` model, and the bench's own lean client, and
 * samples its heap allocations (V8's sampling heap profiler, objects later collected included) over a
 * fixed number of requests after a warm-up. Prints self bytes per request by function, top 40; client
 * frames (raw-http, http-client, grpc-client, this file) are the load generator's, not the node's.
 *
 * HEAP_SAMPLE_CLIENT_WORKER=1 runs the load generator in a worker thread (its own isolate): the profile is the node's alone.
 * HEAP_SAMPLE_SURVIVORS=1 leaves out what scavenges collected: what is left lived through a scavenge (promoted to
 * old space, where only a mark-compact frees it) or is still alive at the end.
 * HEAP_SAMPLE_MODEL=mlp_large samples the 64-request wave instead (mlp_large, `preferred_batch_size: [64]`, 64 callers).
 *
 *   node --import tsx loadtests/src/scenarios/node-heap-sample.ts [http|grpc] [REQUESTS] [OUT.txt]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { createGrpcServer } from '../../../gpu-node/src/server/grpc/index.js';
import { createHttpServer } from '../../../gpu-node/src/server/http/index.js';
import { createNodeCore } from '../../../gpu-node/src/server-api/node-core-impl.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { startModuleWorker } from '../../../shared/src/workers/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sendClosedLoop } from '../lib/load/closed-loop.js';
import { fp32Tensor, int32Tensor } from './batching-requests.js';
import { MLP_INPUT, MLP_MODEL, MLP_OUTPUT, MLP_WIDTH, mlpConfigText } from './batching-configs.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const WAVE = process.env.HEAP_SAMPLE_MODEL === 'mlp_large';
const CONCURRENCY = WAVE ? 64 : 16;
const MODEL = WAVE ? MLP_MODEL : 'simple';
const protocol = process.argv[2] === 'grpc' ? 'grpc' : 'http';
const count = Number(process.argv[3] ?? 5000);
const out = process.argv[4];
const request: InferRequest = WAVE
  ? { id: '', modelName: MLP_MODEL, inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)], outputs: [{ name: MLP_OUTPUT }], parameters: {} }
  : { id: '', modelName: 'simple', inputs: [int32Tensor('INPUT0', 16), int32Tensor('INPUT1', 16)], parameters: {} };

/** The load generator in a worker thread: the same requests, its allocations in another isolate. */
interface Driver {
  drive(n: number): Promise<void>;
  close(): Promise<void>;
}

function workerClient(targetPort: number): Driver {
  const worker = startModuleWorker(new URL('./node-heap-sample-client.ts', import.meta.url), { protocol, port: targetPort, concurrency: CONCURRENCY, request });
  return {
    drive: (n) =>
      new Promise((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage(n);
      }),
    close: async () => {
      worker.postMessage(0);
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}

async function drive(client: InferClient | Driver, n: number): Promise<void> {
  if ('drive' in client) return client.drive(n);
  await sendClosedLoop(n, CONCURRENCY, () => client.infer(request));
}

const dir = await mkdtemp(join(tmpdir(), 'tessera-heap-sample-'));
await writeExampleRepository(dir, { only: [MODEL] });
if (WAVE) {
  const setup = { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: 60_000 } };
  await writeFile(join(dir, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
}
const core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: [MODEL] });
await core.start();
const http = createHttpServer(core, {});
const { port } = await http.listen(0, '127.0.0.1');
const grpc = createGrpcServer(core, {});
const { port: grpcPort } = await grpc.listen(0, '127.0.0.1');
const inWorker = process.env.HEAP_SAMPLE_CLIENT_WORKER === '1';
const client = inWorker ? workerClient(protocol === 'http' ? port : grpcPort) : protocol === 'http' ? createHttpInferClient('127.0.0.1', port, CONCURRENCY) : createGrpcInferClient('127.0.0.1', grpcPort);
await drive(client, 3000);

const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: process.env.HEAP_SAMPLE_SURVIVORS !== '1',
});
await drive(client, count);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
session.disconnect();

// Sites whose callers to list too (comma-separated function names), e.g. HEAP_CALLERS=Map,deprecate.
const callersOf = new Set((process.env['HEAP_CALLERS'] ?? '').split(',').filter((name) => name !== ''));
const bySite = new Map<string, number>();
const callers = new Map<string, number>();
let total = 0;
const siteOf = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anon)'} ${url.replace(/^file:\/\/.*?\/(gpu-node|shared|loadtests)\//, '$1/')}:${lineNumber + 1}`;
};
const walk = (node: ProfileNode, path: readonly string[]): void => {
  const site = siteOf(node);
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  total += node.selfSize;
  if (callersOf.has(node.callFrame.functionName) && node.selfSize > 0) {
    const chain = `${site} <- ${path.slice(-4).reverse().join(' <- ')}`;
    callers.set(chain, (callers.get(chain) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, [...path, site]);
};
walk(profile.head, []);
const lines = [
  `${protocol}, ${count} ${MODEL} requests (concurrency ${CONCURRENCY}), node and client in one process, ${process.version}`,
  `total sampled ${total} bytes: ${Math.round(total / count)} B/req (client included)`,
  ...[...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 40)
    .map(([site, bytes]) => `${String(Math.round(bytes / count)).padStart(7)} B/req  ${site}`),
  ...(callers.size === 0 ? [] : ['', 'callers of the sites asked for (HEAP_CALLERS), top 25:']),
  ...[...callers]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([chain, bytes]) => `${String(Math.round(bytes / count)).padStart(7)} B/req  ${chain}`),
];
console.log(lines.join('\n'));
if (out !== undefined) await writeFile(out, `${lines.join('\n')}\n`);
await client.close();
await http.close({ graceMs: 100 });
await grpc.close(100);
await core.shutdown({ timeoutMs: 5000 });
await rm(dir, { recursive: true, force: true });
process.exit(0);
