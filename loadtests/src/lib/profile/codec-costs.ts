/**
 * CPU per call of the node's infer codecs for mlp_large's request and answer (one FP32 [1, 1024] tensor
 * each way), the hand-written paths beside the protobuf-es ones they replaced on the hot path.
 * Usage: taskset -c 1 node --import tsx loadtests/src/lib/profile/codec-costs.ts
 */
import { toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import {
  decodeMessage,
  decodeModelInferRequest,
  encodeInferRequestFramed,
  encodeInferResponseFramed,
  inferRequestFromProto,
  inferResponseToProto,
} from '../../../../shared/src/grpc/index.js';
import { decodeInferRequestBody, encodeInferRequestBody, encodeInferResponse, INFERENCE_HEADER_CONTENT_LENGTH } from '../../../../shared/src/kserve/index.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';

const data = new Uint8Array(4096);
const request: InferRequest = { id: '', modelName: 'mlp_large', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1024], data }], outputs: [{ name: 'OUTPUT0' }], parameters: {} };
const response: InferResponse = { id: '', modelName: 'mlp_large', modelVersion: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 1024], data }] };

function perCallUs(fn: () => unknown, calls = 50_000): number {
  for (let i = 0; i < 2000; i++) fn();
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const http = encodeInferRequestBody(request);
const headerLength = http.headers[INFERENCE_HEADER_CONTENT_LENGTH] ?? null;
const framed = encodeInferRequestFramed(request, 1 << 30);
const message = Buffer.concat(framed.chunks).subarray(5);
const rows: [string, number][] = [
  ['HTTP request decode (binary extension)', perCallUs(() => decodeInferRequestBody({ body: http.body, headerLength, modelName: 'mlp_large' }))],
  ['HTTP answer encode', perCallUs(() => encodeInferResponse(response, { binaryOutputDefault: true }))],
  ['gRPC request decode, protobuf-es', perCallUs(() => inferRequestFromProto(decodeMessage(ModelInferRequestSchema, message)))],
  ['gRPC request decode, scan', perCallUs(() => inferRequestFromProto(decodeModelInferRequest(message)))],
  ['gRPC answer encode, protobuf-es toBinary', perCallUs(() => toBinary(ModelInferResponseSchema, inferResponseToProto(response)))],
  ['gRPC answer encode, by hand', perCallUs(() => encodeInferResponseFramed(response))],
];
for (const [name, us] of rows) process.stdout.write(`${us.toFixed(2).padStart(7)} us  ${name}\n`);
