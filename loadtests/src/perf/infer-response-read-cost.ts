/**
 * `node --import tsx loadtests/src/perf/infer-response-read-cost.ts`: µs to read the node's answer
 * for `simple` (two INT32 [1, 16] outputs, raw contents), protobuf-es's deserializer against the
 * gateway's own reader (gateway/src/adapters/grpc/infer-response-reader.ts). Pin it with taskset.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelInferResponseSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage } from '../../../shared/src/grpc/index.js';
import { readInferResponse } from '../../../gateway/src/adapters/grpc/infer-response-reader.js';
const bytes = Buffer.from(toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', id: '', outputs: ['OUTPUT0', 'OUTPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })), rawOutputContents: [new Uint8Array(64), new Uint8Array(64)] })));
const plain = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
for (let round = 0; round < 3; round++) {
  for (const [label, fn] of [['protobuf-es', () => decodeMessage(ModelInferResponseSchema, plain)], ['reader', () => readInferResponse(bytes)]] as const) {
    const n = 100000; const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    console.log(round, label, (Number(process.hrtime.bigint() - t) / n / 1000).toFixed(2), 'µs per simple answer');
  }
}
