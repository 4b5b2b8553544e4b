/**
 * Every datatype through the full HTTP path both ways: client request encoder → server request
 * decoder, and server response encoder → client response decoder; JSON wherever the protocol allows
 * it, binary for all.
 */
import { describe, expect, it } from 'vitest';
import {
  DATATYPES,
  encodeBytesElements,
  numbersToBf16Bytes,
  numbersToFp16Bytes,
  typedArrayToBytes,
  type Datatype,
  type InferRequest,
  type Tensor,
} from '../tensors/index.js';
import { expectTesseraError } from '../tensors/test-helpers.js';
import { decodeInferRequestBody } from './infer-request-decode.js';
import { encodeInferRequestBody } from './infer-request-encode.js';
import { decodeInferResponseBody } from './infer-response-decode.js';
import { encodeInferResponse } from './infer-response-encode.js';

/** Sample data per datatype, including each type's extremes, for shape [2, 3]. */
function sample(datatype: Datatype): Uint8Array {
  switch (datatype) {
    case 'BOOL':
      return new Uint8Array([1, 0, 1, 1, 0, 0]);
    case 'UINT8':
      return new Uint8Array([0, 1, 2, 127, 128, 255]);
    case 'INT8':
      return typedArrayToBytes(new Int8Array([-128, -1, 0, 1, 100, 127]));
    case 'UINT16':
      return typedArrayToBytes(new Uint16Array([0, 1, 300, 32768, 65534, 65535]));
    case 'INT16':
      return typedArrayToBytes(new Int16Array([-32768, -1, 0, 1, 300, 32767]));
    case 'UINT32':
      return typedArrayToBytes(new Uint32Array([0, 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1, 7]));
    case 'INT32':
      return typedArrayToBytes(new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 1, 42]));
    case 'UINT64':
      return typedArrayToBytes(new BigUint64Array([0n, 1n, 2n ** 53n - 1n, 123n, 2n ** 40n, 9n]));
    case 'INT64':
      return typedArrayToBytes(new BigInt64Array([-(2n ** 53n) + 1n, -1n, 0n, 1n, 2n ** 53n - 1n, 5n]));
    case 'FP16':
      return numbersToFp16Bytes([0, -1, 0.5, 65504, -2.5, 1e-7]);
    case 'BF16':
      return numbersToBf16Bytes([0, -1, 0.5, 3.0e38, -2.5, 1e-30]);
    case 'FP32':
      return typedArrayToBytes(new Float32Array([0, -1.5, 3.4e38, 1e-45, 0.1, -0]));
    case 'FP64':
      return typedArrayToBytes(new Float64Array([0, -1.5, 1.7e308, 5e-324, 0.1, Math.PI]));
    case 'BYTES':
      return encodeBytesElements(['', 'a', 'héllo', '{"json":true}', 'x'.repeat(300), '\u0000']);
  }
}

const tensorOf = (datatype: Datatype): Tensor => ({ name: `in_${datatype}`, datatype, shape: [2, 3], data: sample(datatype) });
const jsonAllowed = (dt: Datatype): boolean => dt !== 'FP16' && dt !== 'BF16';

describe('HTTP codec round trips for every datatype', () => {
  const request: InferRequest = {
    id: 'rt',
    modelName: 'm',
    modelVersion: '1',
    inputs: DATATYPES.map(tensorOf),
    parameters: { priority: 1, sequence_id: 'seq', flag: true },
    outputs: [{ name: 'a', binaryData: true }, { name: 'b', classification: 2 }, { name: 'c' }],
  };

  it('request, all binary', () => {
    const { body, headers } = encodeInferRequestBody(request, { binaryInputs: true, binaryDataOutput: true });
    const decoded = decodeInferRequestBody({ body, headerLength: headers['Inference-Header-Content-Length'], modelName: 'm', modelVersion: '1' });
    expect(decoded.request).toEqual(request);
    expect(decoded.binaryOutputDefault).toBe(true);
    expect(decoded.outputBinary).toEqual(new Map([['a', true]]));
  });

  it('request, JSON where the protocol allows it', () => {
    const binaryInputs = DATATYPES.filter((dt) => !jsonAllowed(dt)).map((dt) => `in_${dt}`);
    const { body, headers } = encodeInferRequestBody(request, { binaryInputs });
    const decoded = decodeInferRequestBody({ body, headerLength: headers['Inference-Header-Content-Length'], modelName: 'm', modelVersion: '1' });
    expect(decoded.request).toEqual(request);
    expect(decoded.binaryOutputDefault).toBe(false);
  });

  it('request, nothing binary: no header length, FP16 refused on the client', () => {
    const jsonOnly: InferRequest = { ...request, inputs: request.inputs.filter((t) => jsonAllowed(t.datatype)) };
    const { body, headers } = encodeInferRequestBody(jsonOnly, { binaryInputs: false });
    expect(headers).toEqual({ 'Content-Type': 'application/json' });
    expect(decodeInferRequestBody({ body, modelName: 'm', modelVersion: '1' }).request).toEqual(jsonOnly);
    expectTesseraError(() => encodeInferRequestBody(request, { binaryInputs: false }), 'INVALID_ARG', /FP16 data via JSON/);
  });

  for (const binaryOutputDefault of [false, true]) {
    it(`response, ${binaryOutputDefault ? 'binary' : 'JSON where allowed'}`, () => {
      const outputs = DATATYPES.map((dt) => ({ ...tensorOf(dt), name: `out_${dt}` }));
      const outputBinary = new Map(DATATYPES.filter((dt) => !jsonAllowed(dt)).map((dt) => [`out_${dt}`, true]));
      const response = { id: 'rt', modelName: 'm', modelVersion: '1', outputs };
      const { body, headers } = encodeInferResponse(response, { binaryOutputDefault, outputBinary });
      expect(decodeInferResponseBody(body, headers['Inference-Header-Content-Length'])).toEqual(response);
    });
  }
});
