import { describe, expect, it } from 'vitest';
import {
  decodeBytesElements,
  tensorToTypedArray,
  typedArrayToBytes,
  type Tensor,
} from '../tensors/index.js';
import { expectTesseraError, withBinary } from '../tensors/test-helpers.js';
import { decodeInferRequestBody, type DecodeInferRequestOptions } from './infer-request-decode.js';

const enc = new TextEncoder();

function decode(body: unknown, extra: Partial<DecodeInferRequestOptions> = {}) {
  const bytes = body instanceof Uint8Array ? body : enc.encode(typeof body === 'string' ? body : JSON.stringify(body));
  return decodeInferRequestBody({ body: bytes, modelName: 'm', ...extra });
}

const fp32Input = { name: 'x', shape: [2], datatype: 'FP32', data: [1, 2] };
const values = (t: Tensor | undefined): number[] => Array.from(tensorToTypedArray(t as Tensor), Number);

describe('decodeInferRequestBody: JSON', () => {
  it('decodes id, parameters, inputs and outputs; ignores model_name in the body', () => {
    const { request, binaryOutputDefault, outputBinary } = decode(
      {
        id: 'r1',
        model_name: 'other',
        parameters: { priority: 2, sequence_id: 'abc', sequence_start: true, custom: 1.5, tag: 'v' },
        inputs: [fp32Input, { name: 's', shape: [1, 2], datatype: 'BYTES', data: [['a', 'b']] }],
        outputs: [{ name: 'y', parameters: { binary_data: true } }, { name: 'z', parameters: { classification: 3 } }],
      },
      { modelVersion: '2' },
    );
    expect(request.id).toBe('r1');
    expect(request.modelName).toBe('m');
    expect(request.modelVersion).toBe('2');
    expect(request.parameters).toEqual({ priority: 2, sequence_id: 'abc', sequence_start: true, custom: 1.5, tag: 'v' });
    expect(values(request.inputs[0])).toEqual([1, 2]);
    expect(decodeBytesElements(request.inputs[1]?.data as Uint8Array, 2).map((e) => new TextDecoder().decode(e))).toEqual(['a', 'b']);
    expect(request.outputs).toEqual([{ name: 'y', binaryData: true }, { name: 'z', classification: 3 }]);
    expect(binaryOutputDefault).toBe(false);
    expect(outputBinary).toEqual(new Map([['y', true]]));
  });

  it('defaults: empty id, no outputs, binary_data_output consumed', () => {
    const decoded = decode({ inputs: [fp32Input], parameters: { binary_data_output: true } });
    expect(decoded.request.id).toBe('');
    expect(decoded.request.outputs).toBeUndefined();
    expect(decoded.request.parameters).toEqual({});
    expect(decoded.binaryOutputDefault).toBe(true);
  });

  it('names malformed JSON, non-object JSON and invalid UTF-8', () => {
    expectTesseraError(() => decode('{"inputs": ['), 'INVALID_ARG', /failed to parse the request JSON buffer: .+/);
    expectTesseraError(() => decode(''), 'INVALID_ARG', /failed to parse the request JSON buffer/);
    expectTesseraError(() => decode('[1,2]'), 'INVALID_ARG', /must be an object, got \[1,2\]/);
    expectTesseraError(() => decode(new Uint8Array([0x7b, 0xff, 0x7d])), 'INVALID_ARG', /not valid UTF-8/);
  });

  it('checks id, inputs, names, shapes and datatypes', () => {
    expectTesseraError(() => decode({ id: 5, inputs: [] }), 'INVALID_ARG', /'id' must be a string/);
    expectTesseraError(() => decode({}), 'INVALID_ARG', /missing 'inputs'/);
    expectTesseraError(() => decode({ inputs: {} }), 'INVALID_ARG', /'inputs' must be an array/);
    expectTesseraError(() => decode({ inputs: [7] }), 'INVALID_ARG', /input #0 must be a JSON object/);
    expectTesseraError(() => decode({ inputs: [{ shape: [1], datatype: 'FP32', data: [1] }] }), 'INVALID_ARG', /input #0 is missing 'name'/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, name: 3 }] }), 'INVALID_ARG', /'name' of input #0 must be a string/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, datatype: 'FLOAT' }] }), 'INVALID_ARG', /invalid datatype "FLOAT" for input 'x'/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, shape: undefined }] }), 'INVALID_ARG', /input 'x' is missing 'shape'/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, shape: [2.5] }] }), 'INVALID_ARG', /must hold integers/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, shape: [-1] }] }), 'INVALID_ARG', /specified .*input 'x' for model 'm', got \[-1\]/);
    expectTesseraError(() => decode({ inputs: [fp32Input, fp32Input] }), 'INVALID_ARG', /input 'x' appears more than once/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, data: [1, 2, 3] }] }), 'INVALID_ARG', /needs 2 elements, got 3/);
  });

  it('requires exactly one data source per input; shared memory is unsupported', () => {
    expectTesseraError(() => decode({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32' }] }), 'INVALID_ARG', /input 'x' must set exactly one of 'data', 'binary_data_size' in 'parameters' or 'shared_memory_region' in 'parameters', but it sets none/);
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, parameters: { binary_data_size: 8 } }] }), 'INVALID_ARG', /sets 'data' and 'binary_data_size'/);
    expectTesseraError(() => decode({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', parameters: { shared_memory_region: 'r', shared_memory_byte_size: 4 } }] }), 'UNSUPPORTED', 'shared memory is not supported');
    expectTesseraError(() => decode({ inputs: [fp32Input], outputs: [{ name: 'y', parameters: { shared_memory_region: 'r' } }] }), 'UNSUPPORTED', 'shared memory is not supported');
    expectTesseraError(() => decode({ inputs: [{ ...fp32Input, parameters: 3 }] }), 'INVALID_ARG', /'parameters' of input 'x' must be a JSON object/);
  });

  it('rejects FP16/BF16 in JSON with the binary hint', () => {
    expectTesseraError(() => decode({ inputs: [{ name: 'h', shape: [1], datatype: 'FP16', data: [1] }] }), 'INVALID_ARG', "receiving FP16 data via JSON is not supported. Please use the binary data format for input 'h'");
  });

  it('applies --http-max-input-size to JSON data only', () => {
    expectTesseraError(() => decode({ inputs: [fp32Input] }, { maxJsonInputBytes: 4 }), 'INVALID_ARG', /input 'x' needs 8 bytes, more than the limit of 4/);
    const bin = withBinary({ inputs: [{ name: 'x', shape: [2], datatype: 'FP32', parameters: { binary_data_size: 8 } }] }, new Uint8Array(8));
    expect(decode(bin.body, { headerLength: bin.headerLength, maxJsonInputBytes: 4 }).request.inputs[0]?.shape).toEqual([2]);
  });

  it('checks request parameters: reserved prefix, reserved types, value types', () => {
    expectTesseraError(() => decode({ inputs: [], parameters: { triton_x: 1 } }), 'INVALID_ARG', /'triton_x' is not allowed: keys starting with 'triton_' are reserved/);
    expectTesseraError(() => decode({ inputs: [], parameters: { priority: -1 } }), 'INVALID_ARG', /'priority' must be an unsigned integer, got -1/);
    expectTesseraError(() => decode({ inputs: [], parameters: { timeout: 'soon' } }), 'INVALID_ARG', /'timeout' must be an unsigned integer/);
    expectTesseraError(() => decode({ inputs: [], parameters: { sequence_end: 1 } }), 'INVALID_ARG', /'sequence_end' must be a boolean/);
    expectTesseraError(() => decode({ inputs: [], parameters: { sequence_id: 1.5 } }), 'INVALID_ARG', /'sequence_id' must be an unsigned integer or a string/);
    expectTesseraError(() => decode({ inputs: [], parameters: { binary_data_output: 'yes' } }), 'INVALID_ARG', /'binary_data_output' must be a boolean/);
    expectTesseraError(() => decode({ inputs: [], parameters: { custom: [1] } }), 'INVALID_ARG', /'custom' must be a string, a number or a boolean/);
    expectTesseraError(() => decode({ inputs: [], parameters: { custom: null } }), 'INVALID_ARG', /'custom'/);
    expectTesseraError(() => decode({ inputs: [], parameters: [] }), 'INVALID_ARG', /'parameters' of the request must be a JSON object/);
    // A key named like an Object.prototype member stays an ordinary key.
    const { request } = decode('{"inputs":[],"parameters":{"__proto__":"p","constructor":1}}');
    expect(Object.getPrototypeOf(request.parameters)).toBe(Object.prototype);
    expect(Object.entries(request.parameters)).toEqual([['__proto__', 'p'], ['constructor', 1]]);
  });

  it('checks outputs and their parameters', () => {
    expectTesseraError(() => decode({ inputs: [], outputs: {} }), 'INVALID_ARG', /'outputs' must be an array/);
    expectTesseraError(() => decode({ inputs: [], outputs: [{}] }), 'INVALID_ARG', /output #0 is missing 'name'/);
    expectTesseraError(() => decode({ inputs: [], outputs: [{ name: 'y' }, { name: 'y' }] }), 'INVALID_ARG', /output 'y' is requested more than once/);
    // Past 16 outputs repeats are found by a Set, not the scan: both ways refuse, and distinct names pass.
    const many = Array.from({ length: 20 }, (_, i) => ({ name: `o${i}` }));
    expectTesseraError(() => decode({ inputs: [], outputs: [...many, { name: 'o3' }] }), 'INVALID_ARG', /output 'o3' is requested more than once/);
    expect(decode({ inputs: [], outputs: many }).request.outputs?.length).toBe(20);
    expectTesseraError(() => decode({ inputs: [], outputs: [{ name: 'y', parameters: { binary_data: 1 } }] }), 'INVALID_ARG', /'binary_data' of output 'y' must be a boolean/);
    expectTesseraError(() => decode({ inputs: [], outputs: [{ name: 'y', parameters: { classification: 0 } }] }), 'INVALID_ARG', /'classification' of output 'y' must be a positive integer/);
    const { outputBinary, request } = decode({ inputs: [], parameters: { binary_data_output: true }, outputs: [{ name: 'y', parameters: { binary_data: false } }] });
    expect(outputBinary.get('y')).toBe(false);
    expect(request.outputs).toEqual([{ name: 'y', binaryData: false }]);
  });
});

describe('decodeInferRequestBody: binary sections', () => {
  const header = {
    inputs: [
      { name: 'a', shape: [2], datatype: 'INT32', parameters: { binary_data_size: 8 } },
      { name: 'j', shape: [1], datatype: 'BOOL', data: [true] },
      { name: 'b', shape: [1], datatype: 'BYTES', parameters: { binary_data_size: 7 } },
    ],
  };
  const a = typedArrayToBytes(new Int32Array([5, -6]));
  const b = new Uint8Array([3, 0, 0, 0, 0x61, 0x62, 0x63]);

  it('reads binary inputs in order, skipping JSON inputs, as views into the body', () => {
    const { body, headerLength } = withBinary(header, a, b);
    const { request } = decode(body, { headerLength });
    expect(values(request.inputs[0])).toEqual([5, -6]);
    expect(Array.from(request.inputs[1]?.data ?? [])).toEqual([1]);
    expect(request.inputs[2]?.data).toEqual(b);
    expect(request.inputs[0]?.data.buffer).toBe(body.buffer);
  });

  it('reports missing bytes, leftover bytes and size mismatches', () => {
    const short = withBinary(header, a, b.subarray(0, 5));
    expectTesseraError(() => decode(short.body, { headerLength: short.headerLength }), 'INVALID_ARG', /unexpected size for input 'b', expecting 7 bytes but only 5 remain in the request body for model 'm'/);
    const long = withBinary(header, a, b, new Uint8Array(1));
    expectTesseraError(() => decode(long.body, { headerLength: long.headerLength }), 'INVALID_ARG', "unexpected additional input data for model 'm'");
    const wrong = withBinary({ inputs: [{ name: 'a', shape: [3], datatype: 'INT32', parameters: { binary_data_size: 8 } }] }, a);
    expectTesseraError(() => decode(wrong.body, { headerLength: wrong.headerLength }), 'INVALID_ARG', /byte size mismatch for input 'a' for model 'm': expected 12, got 8/);
    const badBytes = withBinary({ inputs: [{ name: 'b', shape: [2], datatype: 'BYTES', parameters: { binary_data_size: 7 } }] }, b);
    expectTesseraError(() => decode(badBytes.body, { headerLength: badBytes.headerLength }), 'INVALID_ARG', /input 'b' for model 'm': shape needs 2 BYTES elements, data holds 1/);
    const negative = withBinary({ inputs: [{ name: 'a', shape: [0], datatype: 'INT32', parameters: { binary_data_size: -1 } }] });
    expectTesseraError(() => decode(negative.body, { headerLength: negative.headerLength }), 'INVALID_ARG', /'binary_data_size' of input 'a' must be a non-negative integer/);
  });

  it('requires the header length for binary inputs and checks its range', () => {
    const { body, headerLength } = withBinary(header, a, b);
    expectTesseraError(() => decode(body), 'INVALID_ARG', /failed to parse/);
    const jsonOnly = enc.encode(JSON.stringify(header));
    expectTesseraError(() => decode(jsonOnly), 'INVALID_ARG', /input 'a' has 'binary_data_size', so the request must carry a valid 'Inference-Header-Content-Length' header/);
    for (const bad of ['-1', 'abc', '1e3', String(body.length + 1), '99999999999', '']) {
      expectTesseraError(() => decode(body, { headerLength: bad }), 'INVALID_ARG', /Inference-Header-Content-Length must be an integer in \[0, \d+\]/);
    }
    expect(decode(body, { headerLength: ` ${headerLength} ` }).request.inputs).toHaveLength(3);
  });

  it('treats leftover bytes after an all-JSON header as an error', () => {
    const { body, headerLength } = withBinary({ inputs: [fp32Input] }, new Uint8Array(2));
    expectTesseraError(() => decode(body, { headerLength }), 'INVALID_ARG', "unexpected additional input data for model 'm'");
  });
});

describe('decodeInferRequestBody: raw binary body', () => {
  const raw = (body: Uint8Array, model: DecodeInferRequestOptions['rawInputModel']) =>
    decode(body, { headerLength: '0', rawInputModel: model });

  it('takes the body as the single input, batch 1 when the model batches, outputs binary', () => {
    const body = typedArrayToBytes(new Float32Array([1, 2, 3, 4, 5, 6]));
    const decoded = raw(body, { maxBatchSize: 8, inputs: [{ name: 'in', datatype: 'FP32', dims: [-1, 2] }] });
    expect(decoded.request.inputs[0]?.shape).toEqual([1, 3, 2]);
    expect(values(decoded.request.inputs[0])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(decoded.binaryOutputDefault).toBe(true);
    expect(decoded.request.outputs).toBeUndefined();
    const fixed = raw(body, { maxBatchSize: 0, inputs: [{ name: 'in', datatype: 'FP32', dims: [6] }] });
    expect(fixed.request.inputs[0]?.shape).toEqual([6]);
  });

  it('prefixes a BYTES body with its length and requires shape [1]', () => {
    const decoded = raw(enc.encode('hello'), { maxBatchSize: 0, inputs: [{ name: 's', datatype: 'BYTES', dims: [1] }] });
    expect(decodeBytesElements(decoded.request.inputs[0]?.data as Uint8Array, 1).map((e) => new TextDecoder().decode(e))).toEqual(['hello']);
    expectTesseraError(() => raw(enc.encode('x'), { maxBatchSize: 0, inputs: [{ name: 's', datatype: 'BYTES', dims: [-1] }] }), 'INVALID_ARG', /For BYTE datatype raw input 's', the model must have input shape \[1\]/);
  });

  it('follows Triton on the cases it cannot deduce', () => {
    const body = new Uint8Array(8);
    expectTesseraError(() => raw(body, { maxBatchSize: 0, inputs: [] }), 'INVALID_ARG', /Raw request must only have 1 input \(found 1\) to be deduced but got 0 inputs in 'm' model configuration/);
    expectTesseraError(() => raw(body, { maxBatchSize: 0, inputs: [{ name: 'a', datatype: 'FP32', dims: [-1, -1] }] }), 'INVALID_ARG', /can not be deduced because there are more than one variable-sized dimension/);
    expectTesseraError(() => raw(new Uint8Array(6), { maxBatchSize: 0, inputs: [{ name: 'a', datatype: 'FP32', dims: [-1] }] }), 'INVALID_ARG', /6 bytes is not a whole number/);
    expectTesseraError(() => raw(body, { maxBatchSize: 0, inputs: [{ name: 'a', datatype: 'FP32', dims: [3] }] }), 'INVALID_ARG', /expected 12 bytes, got 8/);
    expectTesseraError(() => decode(body, { headerLength: '0' }), 'UNSUPPORTED', /raw binary requests/);
  });
});
