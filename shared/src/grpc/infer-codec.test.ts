import { create } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import type {
  InferTensorContentsSchema} from '../gen/grpc_service_pb.js';
import {
  InferParameterSchema,
  ModelInferRequestSchema,
  ModelInferResponseSchema,
} from '../gen/grpc_service_pb.js';
import { encodeBytesElements } from '../tensors/bytes-elements.js';
import type { InferRequest } from '../tensors/index.js';
import {
  inferRequestFromProto,
  inferRequestToProto,
  inferResponseFromProto,
  inferResponseToProto,
  parametersFromProto,
  parametersToProto,
} from './index.js';

type Init = MessageInitShape<typeof ModelInferRequestSchema>;

function decode(init: Init): InferRequest {
  return inferRequestFromProto(create(ModelInferRequestSchema, { modelName: 'm', ...init }));
}

function typed(datatype: string, shape: bigint[], contents: MessageInitShape<typeof InferTensorContentsSchema>): Init {
  return { inputs: [{ name: 'x', datatype, shape, contents }] };
}

function errorOf(fn: () => unknown): TesseraError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    return err as TesseraError;
  }
  throw new Error('expected an error');
}

describe('inferRequestFromProto', () => {
  it('serializes every typed contents field little-endian', () => {
    const le = (arr: ArrayBufferView) => new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    expect(decode(typed('BOOL', [3n], { boolContents: [true, false, true] })).inputs[0]?.data).toEqual(
      new Uint8Array([1, 0, 1]),
    );
    expect(decode(typed('INT8', [2n], { intContents: [-1, 127] })).inputs[0]?.data).toEqual(le(new Int8Array([-1, 127])));
    expect(decode(typed('INT16', [1n], { intContents: [-2] })).inputs[0]?.data).toEqual(le(new Int16Array([-2])));
    expect(decode(typed('INT32', [1n], { intContents: [-7] })).inputs[0]?.data).toEqual(le(new Int32Array([-7])));
    expect(decode(typed('UINT16', [1n], { uintContents: [65535] })).inputs[0]?.data).toEqual(le(new Uint16Array([65535])));
    expect(decode(typed('INT64', [1n], { int64Contents: [-(2n ** 40n)] })).inputs[0]?.data).toEqual(
      le(new BigInt64Array([-(2n ** 40n)])),
    );
    expect(decode(typed('UINT64', [1n], { uint64Contents: [2n ** 63n] })).inputs[0]?.data).toEqual(
      le(new BigUint64Array([2n ** 63n])),
    );
    expect(decode(typed('FP64', [2n], { fp64Contents: [0.5, -1] })).inputs[0]?.data).toEqual(
      le(new Float64Array([0.5, -1])),
    );
    const bytes = decode(typed('BYTES', [2n], { bytesContents: [new Uint8Array([65]), new Uint8Array()] }));
    expect(bytes.inputs[0]?.data).toEqual(encodeBytesElements([new Uint8Array([65]), new Uint8Array()]));
  });

  it('rejects wrong fields, wrong counts, out-of-range values and half floats', () => {
    expect(errorOf(() => decode(typed('INT32', [1n], { fp32Contents: [1] }))).message).toMatch(
      /sets fp32_contents; expected int_contents/,
    );
    expect(errorOf(() => decode(typed('FP32', [2n], { fp32Contents: [1] }))).message).toMatch(
      /unexpected number of elements 1 in fp32_contents of input 'x', expecting 2/,
    );
    expect(errorOf(() => decode(typed('INT8', [1n], { intContents: [300] }))).message).toMatch(/out of range for INT8/);
    expect(errorOf(() => decode(typed('BF16', [1n], {}))).message).toMatch(/BF16.*raw_input_contents/);
    expect(errorOf(() => decode(typed('FP8', [1n], {}))).message).toMatch(/invalid datatype "FP8" for input 'x'/);
    expect(errorOf(() => decode(typed('FP32', [-1n], {}))).code).toBe('INVALID_ARG');
  });

  it('checks raw entries: count, sizes, BYTES framing, missing data, duplicates', () => {
    const input = { name: 'x', datatype: 'BYTES', shape: [2n] };
    expect(
      decode({ inputs: [input], rawInputContents: [encodeBytesElements(['a', 'bc'])] }).inputs[0]?.shape,
    ).toEqual([2]);
    expect(
      errorOf(() => decode({ inputs: [input], rawInputContents: [encodeBytesElements(['a'])] })).message,
    ).toMatch(/BYTES/);
    expect(errorOf(() => decode({ inputs: [input, { ...input, name: 'y' }], rawInputContents: [new Uint8Array()] })).message)
      .toMatch(/expected 2 raw_input_contents entries/);
    expect(errorOf(() => decode({ inputs: [input] })).message).toMatch(/unable to find data for input tensor 'x'/);
    const empty = { ...input, shape: [0n] };
    expect(
      errorOf(() => decode({ inputs: [empty, empty], rawInputContents: [new Uint8Array(), new Uint8Array()] })).message,
    ).toMatch(/more than once/);
  });

  it('finds a repeated input name among a few inputs (compared in turn) and among many (a set), and none where there is none', () => {
    const named = (names: readonly string[]): Init => ({
      inputs: names.map((name) => ({ name, datatype: 'BYTES', shape: [0n] })),
      rawInputContents: names.map(() => new Uint8Array()),
    });
    const many = Array.from({ length: 12 }, (_, i) => `in${i}`);
    expect(errorOf(() => decode(named(['a', 'b', 'a']))).message).toBe("input 'a' is given more than once");
    expect(errorOf(() => decode(named([...many, 'in3']))).message).toBe("input 'in3' is given more than once");
    expect(decode(named(many)).inputs.map((t) => t.name)).toEqual(many);
    expect(decode(named(['a', 'b', 'c'])).inputs.map((t) => t.name)).toEqual(['a', 'b', 'c']);
  });

  it('decodes parameters, classification and rejects shared memory', () => {
    const p = (parameterChoice: MessageInitShape<typeof InferParameterSchema>['parameterChoice']) =>
      create(InferParameterSchema, { parameterChoice });
    const req = decode({
      parameters: {
        priority: p({ case: 'uint64Param', value: 1n }),
        big: p({ case: 'int64Param', value: 2n ** 60n }),
        f: p({ case: 'doubleParam', value: 0.5 }),
        b: p({ case: 'boolParam', value: true }),
      },
      outputs: [{ name: 'o', parameters: { classification: p({ case: 'int64Param', value: 3n }) } }],
    });
    expect(req.parameters).toEqual({ priority: 1, big: 2n ** 60n, f: 0.5, b: true });
    expect(req.outputs).toEqual([{ name: 'o', classification: 3 }]);
    expect(errorOf(() => decode({ parameters: { custom: p({ case: 'uint64Param', value: 1n }) } })).message).toMatch(
      /parameter 'custom' has unsupported type uint64/,
    );
    expect(errorOf(() => decode({ parameters: { empty: p({ case: undefined }) } })).message).toMatch(/no value/);
    const shm = errorOf(() =>
      decode({ outputs: [{ name: 'o', parameters: { shared_memory_region: p({ case: 'stringParam', value: 'r' }) } }] }),
    );
    expect(shm.code).toBe('UNSUPPORTED');
  });
});

describe('client direction and round trips', () => {
  it('round-trips a request through the client encoder and the server decoder', () => {
    const request: InferRequest = {
      id: 'r',
      modelName: 'm',
      modelVersion: '2',
      inputs: [{ name: 'x', datatype: 'FP16', shape: [1, 2], data: new Uint8Array([0, 60, 0, 188]) }],
      outputs: [{ name: 'y', classification: 2 }],
      parameters: { priority: 1, tag: 'a', scale: 0.25, flag: false },
    };
    expect(inferRequestFromProto(inferRequestToProto(request))).toEqual(request);
  });

  it('round-trips a response, and reports a malformed one as INTERNAL', () => {
    const response = {
      id: 'r',
      modelName: 'm',
      modelVersion: '1',
      outputs: [{ name: 'y', datatype: 'INT32' as const, shape: [2], data: new Uint8Array(8) }],
    };
    expect(inferResponseFromProto(inferResponseToProto(response))).toEqual(response);
    const bad = create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [{ name: 'y', datatype: 'INT32', shape: [2n] }],
      rawOutputContents: [new Uint8Array(3)],
    });
    expect(errorOf(() => inferResponseFromProto(bad)).code).toBe('INTERNAL');
    // The no-data message is made only when needed, and still names the output.
    const empty = create(ModelInferResponseSchema, { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [2n] }] });
    const error = errorOf(() => inferResponseFromProto(empty));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toMatch(/no data for output tensor 'y'/);
  });

  it('keeps "__proto__" a plain parameter key', () => {
    const params = parametersFromProto(parametersToProto(JSON.parse('{"__proto__": "x"}')));
    expect(Object.keys(params)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(params)).toBe(Object.prototype);
  });
});

describe('safe-integer bounds (the BigInt bounds are made once, not per dimension or parameter)', () => {
  const p = (parameterChoice: MessageInitShape<typeof InferParameterSchema>['parameterChoice']) => create(InferParameterSchema, { parameterChoice });
  const raw = (shape: bigint[]): Init => ({ inputs: [{ name: 'x', datatype: 'INT8', shape }], rawInputContents: [new Uint8Array(1)] });

  it('a dimension of ±2^53 is an invalid dimension; ±(2^53 - 1) passes that check and fails on what follows', () => {
    expect(errorOf(() => decode(raw([2n ** 53n]))).message).toMatch(/invalid dimension 9007199254740992 /);
    expect(errorOf(() => decode(raw([-(2n ** 53n)]))).message).toMatch(/invalid dimension -9007199254740992 /);
    expect(errorOf(() => decode(raw([2n ** 53n - 1n]))).message).toMatch(/unexpected total byte size 1/);
    expect(errorOf(() => decode(raw([-(2n ** 53n - 1n)]))).message).toMatch(/all dimensions must be specified/);
  });

  it('an int64 parameter is a number up to ±(2^53 - 1) and a bigint beyond', () => {
    const params = parametersFromProto({
      inside: p({ case: 'int64Param', value: 2n ** 53n - 1n }),
      below: p({ case: 'int64Param', value: -(2n ** 53n - 1n) }),
      outside: p({ case: 'int64Param', value: 2n ** 53n }),
      under: p({ case: 'int64Param', value: -(2n ** 53n) }),
    });
    expect(params).toEqual({ inside: 2 ** 53 - 1, below: -(2 ** 53 - 1), outside: 2n ** 53n, under: -(2n ** 53n) });
  });
});
