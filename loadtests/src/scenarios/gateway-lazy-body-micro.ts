/**
 * What a gRPC client's no-store miss no longer does (issue 17, eighth pass), measured in one process:
 * the answer steps after the node's response is decoded, before (encode the KServe body, the bypass
 * copies, withResponseId, the header copy) and now (EncodedOnRead, bypassRunOf, the gRPC answer), on
 * `simple`'s answer (two INT32 [1,16] outputs) and a 4 KB FP32 one, in alternating batches so both
 * see the same moments of a shared box. Prints ns per miss, median of the rounds.
 *
 *   node --import tsx loadtests/src/scenarios/gateway-lazy-body-micro.ts [ROUNDS=7] [BATCH=20000]
 */
import { encodeInferResponse } from '../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../shared/src/tensors/index.js';
import { EncodedOnRead } from '../../../gateway/src/core/app/encoded-on-read.js';
import { bypassRunOf, withResponseId } from '../../../gateway/src/core/cache/index.js';
import { median } from '../lib/sampling/percentiles.js';

const rounds = Number(process.argv[2] ?? 7);
const batch = Number(process.argv[3] ?? 20_000);
const options = { binaryOutputDefault: true, outputBinary: new Map<string, boolean>() };

function answerOf(datatype: 'INT32' | 'FP32', elements: number, names: readonly string[]): InferResponse {
  return {
    id: '',
    modelName: datatype === 'INT32' ? 'simple' : 'identity_fp32',
    modelVersion: '1',
    outputs: names.map((name) => ({ name, datatype, shape: [1, elements], data: new Uint8Array(elements * 4).fill(7) })),
  };
}

/** The seventh pass's steps: encoded in produce, copied by the bypass (fromProduced, finish), the id restamped, headers copied. */
function before(response: InferResponse): unknown {
  const encoded = encodeInferResponse(response, options);
  const produced = { body: encoded.body, headers: encoded.headers, computeUs: 100, modelVersion: response.modelVersion };
  const base = { body: produced.body, headers: produced.headers, computeUs: produced.computeUs };
  const outcome = { ...{ ...base, status: 'BYPASS' as const, bypassReason: 'store-unavailable' }, bypassReason: 'no-store' };
  const cached = { body: outcome.body, headers: outcome.headers, status: outcome.status, computeUs: outcome.computeUs };
  const result = withResponseId(cached, '');
  return { status: 200, headers: { ...result.headers, 'x-cache': cached.status }, body: result.body, inferResponse: response };
}

/** This pass's: the body left unencoded, the gRPC answer built from the response. */
function after(response: InferResponse): unknown {
  const cached = bypassRunOf(new EncodedOnRead(response, options, 100));
  return { status: 200, headers: { 'x-cache': cached.status }, body: null, inferResponse: response };
}

let sink: unknown;
function timeBatch(step: (r: InferResponse) => unknown, response: InferResponse): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) sink = step(response);
  return Number(process.hrtime.bigint() - start) / batch;
}

for (const [label, response] of [
  ['simple (2 x INT32 [1,16])', answerOf('INT32', 16, ['OUTPUT0', 'OUTPUT1'])],
  ['4 KB FP32 ([1,1024])', answerOf('FP32', 1024, ['OUTPUT0'])],
] as const) {
  timeBatch(before, response);
  timeBatch(after, response);
  const b: number[] = [];
  const a: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      b.push(timeBatch(before, response));
      a.push(timeBatch(after, response));
    } else {
      a.push(timeBatch(after, response));
      b.push(timeBatch(before, response));
    }
  }
  console.log(`${label}: before ${median(b).toFixed(0)} ns, after ${median(a).toFixed(0)} ns per miss (rounds ${b.map((x) => x.toFixed(0)).join('/')} vs ${a.map((x) => x.toFixed(0)).join('/')})`);
}
void sink;
