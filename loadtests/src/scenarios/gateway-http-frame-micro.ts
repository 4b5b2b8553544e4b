/**
 * An HTTP binary miss's answer framing, from the node's ModelInferResponse bytes (as the h2 transport
 * receives them) to the body and headers the node:http fast path writes, in one process: the h2
 * transport's read and checks in one pass (readNodeAnswer), the KServe body
 * (EncodedOnRead), the client's id (withResponseId) and the answer's header copy. `simple`'s answer
 * (two INT32 [1,16] outputs) and a 4 KB FP32 one ([1,1024]), client id '' and 'req-1', in alternating
 * batches so both builds see the same moments of a shared box. Prints ns per answer (median of the
 * rounds) and bytes allocated per answer (V8 heap + ArrayBuffer backing stores, over one batch run
 * between forced collections with a young generation too large to collect within it).
 *
 *   node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 --import tsx \
 *     loadtests/src/scenarios/gateway-http-frame-micro.ts [ROUNDS=9] [BATCH=20000] [OLD_CHAIN]
 *
 * OLD_CHAIN: gateway-http-frame-chain.ts copied into another checkout (`git archive BASE | tar -x`), to
 * compare that checkout's steps with this one's; without it only this checkout's are measured.
 */
import { encodeInferResponseFramed } from '../../../shared/src/grpc/index.js';
import type { InferResponse } from '../../../shared/src/tensors/index.js';
import { median } from '../lib/sampling/percentiles.js';
import { frameHttpMiss } from './gateway-http-frame-chain.js';

const rounds = Number(process.argv[2] ?? 9);
const batch = Number(process.argv[3] ?? 20_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

type Frame = (message: Buffer, id: string) => unknown;
const builds: [string, Frame][] = [['this checkout', frameHttpMiss]];
if (process.argv[4] !== undefined) {
  const old = (await import(process.argv[4])) as { frameHttpMiss: Frame };
  builds.unshift(['old', old.frameHttpMiss]);
}

function messageOf(datatype: 'INT32' | 'FP32', elements: number, names: readonly string[]): Buffer {
  const response: InferResponse = {
    id: '',
    modelName: datatype === 'INT32' ? 'simple' : 'identity_fp32',
    modelVersion: '1',
    outputs: names.map((name) => ({ name, datatype, shape: [1, elements], data: new Uint8Array(elements * 4).fill(7) })),
  };
  // The node's framed answer, its 5-byte gRPC prefix cut off as the h2 call does.
  return Buffer.concat(encodeInferResponseFramed(response, Infinity).chunks).subarray(5);
}

let sink: unknown;
function timeBatch(frame: Frame, message: Buffer, id: string): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) sink = frame(message, id);
  return Number(process.hrtime.bigint() - start) / batch;
}

/** Median of 5 batches, each between a forced collection and none (the young generation holds it). */
function allocatedPer(frame: Frame, message: Buffer, id: string): number {
  const n = 2_000;
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    gc!();
    const before = process.memoryUsage();
    for (let i = 0; i < n; i++) sink = frame(message, id);
    const after = process.memoryUsage();
    runs.push((after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / n);
  }
  return median(runs);
}

for (const [label, message] of [
  ['simple (2 x INT32 [1,16])', messageOf('INT32', 16, ['OUTPUT0', 'OUTPUT1'])],
  ['4 KB FP32 ([1,1024])', messageOf('FP32', 1024, ['OUTPUT0'])],
] as const) {
  for (const id of ['', 'req-1']) {
    const times = builds.map((): number[] => []);
    for (const [, frame] of builds) timeBatch(frame, message, id);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
      for (const i of order) times[i]!.push(timeBatch(builds[i]![1], message, id));
    }
    const parts = builds.map(([name, frame], i) => `${name} ${median(times[i]!).toFixed(0)} ns, ${allocatedPer(frame, message, id).toFixed(0)} B`);
    console.log(`${label}, id '${id}': ${parts.join(' | ')}`);
  }
}
void sink;
