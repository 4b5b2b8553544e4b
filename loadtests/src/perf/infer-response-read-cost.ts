/**
 * The gateway's read of a node's answer for `simple` (two INT32 [1, 16] outputs, raw contents) into the
 * InferResponse it passes on, in turns: protobuf-es then inferResponseFromProto (the reference), the
 * two-step read of BASE_TREE's checkout when given (its reader then inferResponseFromProto), and this
 * tree's one-pass reader (gateway/src/adapters/grpc/infer-response-reader.ts). µs per answer and bytes
 * allocated per answer (heap growth with no collection inside the window: the semi-space is large).
 *
 *   [BASE_TREE=/work/main] taskset -c 0 node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 \
 *     --import tsx loadtests/src/perf/infer-response-read-cost.ts
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { PerformanceObserver } from 'node:perf_hooks';
import { ModelInferResponseSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../../shared/src/grpc/index.js';
import { readNodeAnswer } from '../../../gateway/src/adapters/grpc/infer-response-reader.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
let collections = 0;
new PerformanceObserver((list) => void (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });

const bytes = Buffer.from(toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', id: '', outputs: ['OUTPUT0', 'OUTPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })), rawOutputContents: [new Uint8Array(64), new Uint8Array(64)] })));
const plain = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const contenders: [string, (b: Buffer) => unknown][] = [['reference', () => inferResponseFromProto(decodeMessage(ModelInferResponseSchema, plain))]];
const baseTree = process.env.BASE_TREE;
if (baseTree !== undefined) {
  const base = (await import(`${baseTree}/gateway/src/adapters/grpc/infer-response-reader.ts`)) as { readInferResponse?: (b: Uint8Array) => never; readNodeAnswer?: (b: Uint8Array) => unknown };
  const baseCodec = (await import(`${baseTree}/shared/src/grpc/index.ts`)) as { inferResponseFromProto: (m: never) => unknown };
  // A tree from before the one-pass reader has the two steps; a later one, its own readNodeAnswer.
  const { readInferResponse, readNodeAnswer: baseRead } = base;
  if (readInferResponse !== undefined) contenders.push(['two-step (base)', (b) => baseCodec.inferResponseFromProto(readInferResponse(b))]);
  else if (baseRead !== undefined) contenders.push(['one pass (base)', (b) => baseRead(b)]);
}
contenders.push(['one pass (this tree)', (b) => readNodeAnswer(b)]);

const rounds = Number(process.env.ROUNDS ?? 5);
const calls = Number(process.env.CALLS ?? 20000);
const results = new Map<string, { us: number[]; bytes: number[] }>();
const keep: unknown[] = new Array(calls);
for (let round = 0; round < rounds; round++) {
  for (const [label, read] of contenders) {
    for (let i = 0; i < 2000; i++) read(bytes); // warm
    gc();
    const before = collections;
    const heap0 = process.memoryUsage().heapUsed;
    const t = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) keep[i] = read(bytes);
    const us = Number(process.hrtime.bigint() - t) / calls / 1000;
    const perCall = (process.memoryUsage().heapUsed - heap0) / calls;
    const entry = results.get(label) ?? { us: [], bytes: [] };
    entry.us.push(us);
    if (collections === before) entry.bytes.push(perCall);
    results.set(label, entry);
    console.log(round, label, us.toFixed(3), 'µs', collections === before ? `${perCall.toFixed(0)} bytes` : '(collection inside: bytes left out)');
    keep.fill(undefined);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
for (const [label, { us, bytes: b }] of results) console.log(`${label}: median ${median(us).toFixed(3)} µs, ${median(b).toFixed(0)} bytes per answer (${b.length} clean windows)`);
