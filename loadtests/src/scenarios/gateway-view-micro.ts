/**
 * What sending a 4 KB tensor as a view costs against copying it into the message's one buffer, on the
 * gateway's two gRPC writes of it: the request to the node (encodeInferRequestFramed) and a forwarded
 * answer to a gRPC client (encodeForwardedInferResponseFramed), each at the default 16 KiB threshold
 * (copied) and at 1 KiB (a view after a small head); and the node's 4 KB answer read from two DATA frames
 * (the node's writes uncorked: joined into one buffer) against one. ns per call in turns (median of rounds)
 * and bytes allocated per call (V8 heap + ArrayBuffer backing stores).
 *
 *   node --expose-gc --import tsx loadtests/src/scenarios/gateway-view-micro.ts [rounds=9] [batch=20000]
 */
import { encodeForwardedInferResponseFramed, encodeInferRequestFramed, encodeInferResponseFramed, UnaryMessageReader } from '../../../shared/src/grpc/index.js';
import { median } from '../lib/sampling/percentiles.js';
import { FP32_4K_REQUEST, FP32_ELEMENTS } from './gateway-per-core-stack.js';

const rounds = Number(process.argv[2] ?? 9);
const batch = Number(process.argv[3] ?? 20_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const answer = encodeInferResponseFramed({
  id: '',
  modelName: FP32_4K_REQUEST.modelName,
  modelVersion: '1',
  outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, FP32_ELEMENTS], data: FP32_4K_REQUEST.inputs[0]!.data }],
  parameters: {},
});
const framed = Buffer.concat(answer.chunks);
const message = framed.subarray(5);
/** The node's answer as the gateway's h2 stream hands it over: one chunk per DATA frame. */
const readAnswer = (chunks: readonly Buffer[]): Buffer => {
  const reader = new UnaryMessageReader(1 << 20);
  for (const chunk of chunks) reader.push(chunk);
  return reader.message();
};
const twoFrames = [framed.subarray(0, 53), framed.subarray(53)];

const cases: [string, () => unknown][] = [
  ['request to the node, copied (16 KiB)', () => encodeInferRequestFramed(FP32_4K_REQUEST, 16 * 1024)],
  ['request to the node, view (1 KiB)', () => encodeInferRequestFramed(FP32_4K_REQUEST, 1024)],
  ['forwarded answer, copied (16 KiB)', () => encodeForwardedInferResponseFramed(message, '', 16 * 1024)],
  ['forwarded answer, view (1 KiB)', () => encodeForwardedInferResponseFramed(message, '', 1024)],
  ["node's answer read from two DATA frames", () => readAnswer(twoFrames)],
  ["node's answer read from one DATA frame", () => readAnswer([framed])],
];

let sink: unknown;
function timeBatch(run: () => unknown): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) sink = run();
  return Number(process.hrtime.bigint() - start) / batch;
}

function allocatedPer(run: () => unknown): number {
  const n = 2_000;
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    gc!();
    const before = process.memoryUsage();
    for (let i = 0; i < n; i++) sink = run();
    const after = process.memoryUsage();
    runs.push((after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / n);
  }
  return median(runs);
}

const times = cases.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i);
  for (const i of order) times[i]!.push(timeBatch(cases[i]![1]));
}
for (const [i, [name, run]] of cases.entries()) {
  process.stdout.write(`${name}: ${median(times[i]!).toFixed(0)} ns (rounds ${times[i]!.map((t) => t.toFixed(0)).join(', ')}), ${allocatedPer(run).toFixed(0)} B allocated\n`);
}
void sink;
