/**
 * The gateway front door's read of a client's ModelInferRequest for `simple` (two INT32 [1, 16] inputs,
 * raw contents, two requested outputs) into the InferRequest the pipeline takes, in turns: the
 * two-step read (decodeModelInferRequest's plain scan, inferRequestFromProto, the framing check) and
 * the one-pass reader (gateway/src/adapters/grpc-front/plain-infer-request.ts). µs and bytes allocated
 * per request (heap growth with no collection inside the window: the semi-space is large).
 *
 *   taskset -c 0 node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 \
 *     --import tsx loadtests/src/perf/infer-request-read-cost.ts
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { PerformanceObserver } from 'node:perf_hooks';
import { ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { checkForwardableFraming, decodeModelInferRequest, inferRequestFromProto } from '../../../shared/src/grpc/index.js';
import { readPlainInferRequest } from '../../../gateway/src/adapters/grpc-front/plain-infer-request.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
let collections = 0;
new PerformanceObserver((list) => void (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });

const bytes = Buffer.from(
  toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })),
      outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
      rawInputContents: [new Uint8Array(64), new Uint8Array(64)],
    }),
  ),
);

const contenders: [string, (b: Buffer) => unknown][] = [
  [
    'two-step',
    (b) => {
      const msg = decodeModelInferRequest(b);
      const request = inferRequestFromProto(msg);
      checkForwardableFraming(b);
      return request;
    },
  ],
  ['one pass', (b) => readPlainInferRequest(b)!.request],
];

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
for (const [label, { us, bytes: b }] of results) console.log(`${label}: median ${median(us).toFixed(3)} µs, ${median(b).toFixed(0)} bytes per request (${b.length} clean windows)`);
