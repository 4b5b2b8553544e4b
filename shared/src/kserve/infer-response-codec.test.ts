import { describe, expect, it } from 'vitest';
import { encodeBytesElements, numbersToFp16Bytes, typedArrayToBytes, type InferResponse, type Tensor } from '../tensors/index.js';
import { expectTesseraError } from '../tensors/test-helpers.js';
import { decodeInferResponseBody, httpErrorFromResponse } from './infer-response-decode.js';
import { encodeInferResponse } from './infer-response-encode.js';

const text = (b: Uint8Array): string => new TextDecoder().decode(b);
const i32: Tensor = { name: 'y', datatype: 'INT32', shape: [1, 2], data: typedArrayToBytes(new Int32Array([3, -4])) };
const str: Tensor = { name: 's', datatype: 'BYTES', shape: [1], data: encodeBytesElements(['ok']) };
const response = (outputs: Tensor[], extra: Partial<InferResponse> = {}): InferResponse => ({
  id: '',
  modelName: 'm',
  modelVersion: '3',
  outputs,
  ...extra,
});

describe('encodeInferResponse', () => {
  it('writes JSON with a string version, flat data and no empty id', () => {
    const { body, headers } = encodeInferResponse(response([i32, str]), { binaryOutputDefault: false });
    expect(headers).toEqual({ 'Content-Type': 'application/json' });
    expect(JSON.parse(text(body))).toEqual({
      model_name: 'm',
      model_version: '3',
      outputs: [
        { name: 'y', datatype: 'INT32', shape: [1, 2], data: [3, -4] },
        { name: 's', datatype: 'BYTES', shape: [1], data: ['ok'] },
      ],
    });
  });

  it('echoes a non-empty id and response parameters', () => {
    const { body } = encodeInferResponse(response([], { id: 'abc', parameters: { triton_final_response: true, n: 2 } }), { binaryOutputDefault: false });
    expect(text(body)).toBe('{"id":"abc","model_name":"m","model_version":"3","parameters":{"triton_final_response":true,"n":2},"outputs":[]}');
  });

  it('puts binary outputs after the JSON header, per-output choice over the default', () => {
    const { body, headers } = encodeInferResponse(response([i32, str]), {
      binaryOutputDefault: true,
      outputBinary: new Map([['s', false]]),
    });
    expect(headers['Content-Type']).toBe('application/octet-stream');
    const headerLength = Number(headers['Inference-Header-Content-Length']);
    const json = JSON.parse(text(body.subarray(0, headerLength))) as { outputs: unknown[] };
    expect(json.outputs).toEqual([
      { name: 'y', datatype: 'INT32', shape: [1, 2], parameters: { binary_data_size: 8 } },
      { name: 's', datatype: 'BYTES', shape: [1], data: ['ok'] },
    ]);
    expect(body.subarray(headerLength)).toEqual(i32.data);
  });

  it('writes 64-bit integers exactly and non-finite floats as null', () => {
    const big: Tensor = { name: 'b', datatype: 'UINT64', shape: [2], data: typedArrayToBytes(new BigUint64Array([2n ** 64n - 1n, 7n])) };
    const nan: Tensor = { name: 'f', datatype: 'FP32', shape: [2], data: typedArrayToBytes(new Float32Array([NaN, 1])) };
    const { body } = encodeInferResponse(response([big, nan]), { binaryOutputDefault: false });
    expect(text(body)).toContain('"data":[18446744073709551615,7]');
    expect(text(body)).toContain('"data":[null,1]');
  });

  it('refuses FP16 as JSON (client error) and flags inconsistent outputs as INTERNAL', () => {
    const half: Tensor = { name: 'h', datatype: 'FP16', shape: [1], data: numbersToFp16Bytes([1]) };
    expectTesseraError(() => encodeInferResponse(response([half]), { binaryOutputDefault: false }), 'INVALID_ARG', /Please use the binary data format for output 'h'/);
    expect(encodeInferResponse(response([half]), { binaryOutputDefault: false, outputBinary: new Map([['h', true]]) }).body.length).toBeGreaterThan(0);
    const broken: Tensor = { ...i32, shape: [3] };
    expectTesseraError(() => encodeInferResponse(response([broken]), { binaryOutputDefault: true }), 'INTERNAL', /inconsistent inference output/);
  });
});

describe('decodeInferResponseBody and httpErrorFromResponse', () => {
  it('decodes what encodeInferResponse wrote, JSON and binary', () => {
    for (const binaryOutputDefault of [false, true]) {
      const { body, headers } = encodeInferResponse(response([i32, str], { id: 'q' }), { binaryOutputDefault });
      const decoded = decodeInferResponseBody(body, headers['Inference-Header-Content-Length']);
      expect(decoded).toEqual(response([i32, str], { id: 'q' }));
    }
  });

  it('turns NaN written as null back into NaN', () => {
    const nan: Tensor = { name: 'f', datatype: 'FP64', shape: [1], data: typedArrayToBytes(new Float64Array([NaN])) };
    const { body } = encodeInferResponse(response([nan]), { binaryOutputDefault: false });
    const out = decodeInferResponseBody(body).outputs[0] as Tensor;
    expect(new Float64Array(out.data.slice().buffer)[0]).toBeNaN();
  });

  it('reports a malformed response as INTERNAL', () => {
    const enc = new TextEncoder();
    expectTesseraError(() => decodeInferResponseBody(enc.encode('nope')), 'INTERNAL', /malformed inference response: failed to parse/);
    expectTesseraError(() => decodeInferResponseBody(enc.encode('{"model_version":"1"}')), 'INTERNAL', /'model_name' is missing/);
    expectTesseraError(() => decodeInferResponseBody(enc.encode('{"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"INT32","shape":[2],"data":[1]}]}')), 'INTERNAL', /needs 2 elements/);
    const withExtra = enc.encode('{"model_name":"m","model_version":"1","outputs":[]}xx');
    expectTesseraError(() => decodeInferResponseBody(withExtra, String(withExtra.length - 2)), 'INTERNAL', /unexpected bytes after/);
  });

  it('maps error answers to codes by status', () => {
    const err = httpErrorFromResponse(404, new TextEncoder().encode('{"error":"Request for unknown model: \'x\' is not found"}'));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBe("Request for unknown model: 'x' is not found");
    expect(httpErrorFromResponse(503, new Uint8Array(0)).code).toBe('UNAVAILABLE');
    expect(httpErrorFromResponse(400, new Uint8Array(0)).message).toBe('HTTP status 400');
  });
});
