/**
 * BYTES are bytes: a node carries each BYTES element exactly (a NUL inside, bytes that are not UTF-8)
 * over HTTP JSON, HTTP binary, gRPC raw and typed contents wherever the runtime can hold it (a
 * TypeScript-backend model gets Uint8Arrays), and answers 400 / INVALID_ARGUMENT naming the tensor and
 * element where it cannot (onnxruntime string tensors; a JSON string for bytes that are not UTF-8).
 * Never an answer with altered data.
 */
import { create } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { status, type Client, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { decodeInferResponseBody, encodeInferRequestBody } from '../../shared/src/kserve/index.js';
import { decodeBytesElements, encodeBytesElements } from '../../shared/src/tensors/index.js';
import { call, expectError, json } from './http-client.js';
import { exampleRepository, grpcClient, removeDir, startTestNode, writeBytesIdentityModel, writeOnnxStringIdentityModel, type TestNode } from './support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const WITH_NUL = new Uint8Array([0x68, 0x65, 0x00, 0x6c, 0x6c, 0x6f]); // he\0llo
const NOT_UTF8 = new Uint8Array([0xff, 0x61, 0x62, 0x63]); // \xffabc
const PLAIN = new TextEncoder().encode('héllo');

let node: TestNode;
let repo: string | undefined;
let client: Client;

beforeAll(async () => {
  repo = await exampleRepository(['simple_identity']);
  await writeBytesIdentityModel(repo, 'ts_bytes');
  await writeOnnxStringIdentityModel(repo, 'onnx_strings');
  node = await startTestNode(repo);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo);
});

const post = (model: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  call(node.http, 'POST', `/v2/models/${model}/infer`, body, headers);

function binaryRequest(model: string, elements: Uint8Array[], binaryOutput: boolean) {
  return encodeInferRequestBody(
    { id: '', modelName: model, inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [elements.length, 1], data: encodeBytesElements(elements) }], parameters: {} },
    { binaryDataOutput: binaryOutput },
  );
}

async function binaryRoundTrip(model: string, elements: Uint8Array[]) {
  const encoded = binaryRequest(model, elements, true);
  const answer = await post(model, encoded.body, encoded.headers);
  return answer;
}

function outputElements(answer: { body: Uint8Array; headers: Headers }, count: number): Uint8Array[] {
  const response = decodeInferResponseBody(answer.body, answer.headers.get('inference-header-content-length'));
  return decodeBytesElements(response.outputs[0]?.data ?? new Uint8Array(), count);
}

type InferInit = MessageInitShape<typeof ModelInferRequestSchema>;
const infer = (init: InferInit) => callUnary(client, svc.modelInfer, create(ModelInferRequestSchema, init));

async function grpcError(promise: Promise<unknown>): Promise<ServiceError> {
  return (await promise.then(
    () => {
      throw new Error('expected an error');
    },
    (e: unknown) => e,
  )) as ServiceError;
}

describe('a TypeScript-backend model: every byte comes back', () => {
  it('HTTP binary in and out: NUL and bytes that are not UTF-8', async () => {
    const answer = await binaryRoundTrip('ts_bytes', [WITH_NUL, NOT_UTF8, PLAIN]);
    expect(answer.status, answer.text).toBe(200);
    expect(outputElements(answer, 3)).toEqual([WITH_NUL, NOT_UTF8, PLAIN]);
  });

  it('HTTP JSON: a NUL travels as \\u0000 both ways', async () => {
    const answer = await post('ts_bytes', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [2, 1], datatype: 'BYTES', data: ['he\u0000llo', 'héllo'] }] }));
    expect(answer.status, answer.text).toBe(200);
    expect((json(answer) as { outputs: { data: string[] }[] }).outputs[0]?.data).toEqual(['he\u0000llo', 'héllo']);
  });

  it('HTTP JSON out of bytes that are not UTF-8: 400 naming the output and element, not U+FFFD', async () => {
    const encoded = binaryRequest('ts_bytes', [PLAIN, NOT_UTF8], false);
    expectError(await post('ts_bytes', encoded.body, encoded.headers), 400, /output 'OUTPUT0' element 1 is not valid UTF-8.*binary/);
  });

  it('HTTP JSON in with a lone surrogate: 400 naming the element (UTF-8 cannot encode it)', async () => {
    const body = `{"inputs":[{"name":"INPUT0","shape":[2,1],"datatype":"BYTES","data":["ok","\\ud800x"]}]}`;
    expectError(await post('ts_bytes', body), 400, /input 'INPUT0'.*element 1 is not well-formed Unicode/);
  });

  it('gRPC raw and typed contents', async () => {
    const raw = await infer({ modelName: 'ts_bytes', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2n, 1n] }], rawInputContents: [encodeBytesElements([WITH_NUL, NOT_UTF8])] });
    expect(decodeBytesElements(raw.response.rawOutputContents[0] ?? new Uint8Array(), 2)).toEqual([WITH_NUL, NOT_UTF8]);
    const typed = await infer({ modelName: 'ts_bytes', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2n, 1n], contents: { bytesContents: [WITH_NUL, NOT_UTF8] } }] });
    expect(decodeBytesElements(typed.response.rawOutputContents[0] ?? new Uint8Array(), 2)).toEqual([WITH_NUL, NOT_UTF8]);
  });
});

describe("Triton's simple_identity example: every byte back, as its client checks", () => {
  it('HTTP binary and gRPC raw: a NUL and bytes that are not UTF-8 come back unchanged', async () => {
    expect(outputElements(await binaryRoundTrip('simple_identity', [WITH_NUL, NOT_UTF8]), 2)).toEqual([WITH_NUL, NOT_UTF8]);
    const raw = await infer({ modelName: 'simple_identity', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 2n] }], rawInputContents: [encodeBytesElements([WITH_NUL, PLAIN])] });
    expect(decodeBytesElements(raw.response.rawOutputContents[0] ?? new Uint8Array(), 2)).toEqual([WITH_NUL, PLAIN]);
  });
});

describe('an ONNX string model: what onnxruntime cannot hold is refused, never altered', () => {
  it('HTTP binary: a NUL → 400 naming input and element; bytes that are not UTF-8 → 400', async () => {
    expectError(await binaryRoundTrip('onnx_strings', [PLAIN, WITH_NUL]), 400, /input 'INPUT0'.*element 1 holds a NUL byte/);
    expectError(await binaryRoundTrip('onnx_strings', [NOT_UTF8]), 400, /input 'INPUT0'.*element 0 is not valid UTF-8/);
    const fine = await binaryRoundTrip('onnx_strings', [PLAIN]);
    expect(outputElements(fine, 1)).toEqual([PLAIN]);
  });

  it('HTTP JSON: a NUL → 400', async () => {
    const answer = await post('onnx_strings', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'BYTES', data: ['he\u0000llo'] }] }));
    expectError(answer, 400, /element 0 holds a NUL byte/);
  });

  it('gRPC raw and typed contents → INVALID_ARGUMENT naming the element', async () => {
    const raw = await grpcError(infer({ modelName: 'onnx_strings', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 1n] }], rawInputContents: [encodeBytesElements([NOT_UTF8])] }));
    expect(raw.code).toBe(status.INVALID_ARGUMENT);
    expect(raw.details).toMatch(/element 0 is not valid UTF-8/);
    const typed = await grpcError(infer({ modelName: 'onnx_strings', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 1n], contents: { bytesContents: [WITH_NUL] } }] }));
    expect(typed.code).toBe(status.INVALID_ARGUMENT);
    expect(typed.details).toMatch(/element 0 holds a NUL byte/);
  });
});
