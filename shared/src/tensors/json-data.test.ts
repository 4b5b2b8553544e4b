import { describe, expect, it } from 'vitest';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.js';
import { jsonDataToTensorBytes, tensorBytesToJsonData } from './json-data.js';
import type { Tensor } from './tensor.js';
import { expectTesseraError, listOf } from './test-helpers.js';
import { tensorToTypedArray, typedArrayToBytes } from './typed-array.js';

const asTensor = (datatype: Tensor['datatype'], shape: number[], data: Uint8Array): Tensor => ({ name: 'x', datatype, shape, data });

describe('jsonDataToTensorBytes', () => {
  it('accepts flat and nested data in row-major order', () => {
    const flat = jsonDataToTensorBytes('INT32', [2, 3], [1, 2, 3, 4, 5, 6]);
    const nested = jsonDataToTensorBytes('INT32', [2, 3], [[1, 2, 3], [4, 5, 6]]);
    expect(nested).toEqual(flat);
    expect(listOf(tensorToTypedArray(asTensor('INT32', [2, 3], flat)))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(jsonDataToTensorBytes('FP32', [], [1.5])).toEqual(typedArrayToBytes(new Float32Array([1.5])));
    expect(jsonDataToTensorBytes('FP32', [2, 0], [[], []])).toEqual(new Uint8Array(0));
    expect(jsonDataToTensorBytes('FP32', [0], [])).toEqual(new Uint8Array(0));
  });

  it('requires nested data to mirror the shape', () => {
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [3, 2], [[1, 2, 3], [4, 5, 6]], { name: 'x' }), 'INVALID_ARG', /'data' of input 'x': nested arrays do not match shape \[3,2\]/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [2, 2], [[1, 2], [3]]), 'INVALID_ARG', /do not match/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [2, 2], [[1, 2], 3, 4]), 'INVALID_ARG', /do not match/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [4], [1, [2], 3, 4]), 'INVALID_ARG', /element 1 should be an integer/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [2, 2], [1, 2, 3]), 'INVALID_ARG', /shape \[2,2\] needs 4 elements, got 3/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [1], 5), 'INVALID_ARG', /expected an array, got 5/);
  });

  it('limits nesting to 100 levels', () => {
    const deep = (levels: number): unknown => {
      let node: unknown = 1;
      for (let i = 0; i < levels; i++) node = [node];
      return node;
    };
    expect(jsonDataToTensorBytes('UINT8', new Array(100).fill(1), deep(100))).toEqual(new Uint8Array([1]));
    expectTesseraError(() => jsonDataToTensorBytes('UINT8', new Array(101).fill(1), deep(101)), 'INVALID_ARG', /deeper than 100/);
    // Absurd nesting in a flat-shaped input is a plain type error, not a stack overflow.
    expectTesseraError(() => jsonDataToTensorBytes('UINT8', [1], [deep(20000)]), 'INVALID_ARG', /element 0 should be/);
  });

  it('range-checks integers per type', () => {
    expect(Array.from(jsonDataToTensorBytes('INT8', [2], [-128, 127]))).toEqual([0x80, 0x7f]);
    expectTesseraError(() => jsonDataToTensorBytes('INT8', [1], [128], { name: 'x' }), 'INVALID_ARG', /input 'x': element 0 should be an integer in \[-128, 127\], got 128/);
    expectTesseraError(() => jsonDataToTensorBytes('UINT8', [1], [-1]), 'INVALID_ARG', /\[0, 255\]/);
    expectTesseraError(() => jsonDataToTensorBytes('UINT16', [1], [65536]), 'INVALID_ARG', /\[0, 65535\]/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [1], [1.5]), 'INVALID_ARG', /integer/);
    expectTesseraError(() => jsonDataToTensorBytes('UINT32', [1], ['7']), 'INVALID_ARG', /got "7"/);
    expectTesseraError(() => jsonDataToTensorBytes('INT64', [1], [true]), 'INVALID_ARG', /64-bit signed integer, got true/);
    expectTesseraError(() => jsonDataToTensorBytes('UINT64', [1], [-1]), 'INVALID_ARG', /64-bit unsigned/);
    expectTesseraError(() => jsonDataToTensorBytes('UINT64', [1], [2 ** 65]), 'INVALID_ARG', /64-bit unsigned/);
  });

  it('takes 64-bit extremes, clamping the values JSON rounded onto 2^63 / 2^64', () => {
    const u64 = JSON.parse('[18446744073709551615, 0]') as number[];
    const i64 = JSON.parse('[9223372036854775807, -9223372036854775808]') as number[];
    expect(tensorToTypedArray(asTensor('UINT64', [2], jsonDataToTensorBytes('UINT64', [2], u64)))).toEqual(new BigUint64Array([2n ** 64n - 1n, 0n]));
    expect(tensorToTypedArray(asTensor('INT64', [2], jsonDataToTensorBytes('INT64', [2], i64)))).toEqual(new BigInt64Array([2n ** 63n - 1n, -(2n ** 63n)]));
  });

  it('takes BOOL only as true/false and BYTES only as strings', () => {
    expect(Array.from(jsonDataToTensorBytes('BOOL', [2], [true, false]))).toEqual([1, 0]);
    expectTesseraError(() => jsonDataToTensorBytes('BOOL', [1], [1]), 'INVALID_ARG', /true or false/);
    const bytes = jsonDataToTensorBytes('BYTES', [2], ['hé', '']);
    expect(decodeBytesElements(bytes, 2).map((e) => new TextDecoder().decode(e))).toEqual(['hé', '']);
    expectTesseraError(() => jsonDataToTensorBytes('BYTES', [1], [5]), 'INVALID_ARG', /a string/);
    expectTesseraError(() => jsonDataToTensorBytes('FP32', [1], [null]), 'INVALID_ARG', /a number, got null/);
  });

  it('refuses FP16 and BF16 as Triton does', () => {
    expectTesseraError(() => jsonDataToTensorBytes('FP16', [1], [1], { name: 'x' }), 'INVALID_ARG', "receiving FP16 data via JSON is not supported. Please use the binary data format for input 'x'");
    expectTesseraError(() => jsonDataToTensorBytes('BF16', [1], [1], { name: 'y' }), 'INVALID_ARG', /receiving BF16 data via JSON .* input 'y'/);
  });

  it('enforces the byte limit before allocating', () => {
    expectTesseraError(() => jsonDataToTensorBytes('FP64', [2 ** 40], [], { name: 'big' }), 'INVALID_ARG', /input 'big' needs 8796093022208 bytes, more than the limit of 67108864/);
    expectTesseraError(() => jsonDataToTensorBytes('INT32', [3], [1, 2, 3], { maxBytes: 8 }), 'INVALID_ARG', /needs 12 bytes/);
    expectTesseraError(() => jsonDataToTensorBytes('BYTES', [1], ['0123456789'], { maxBytes: 8 }), 'INVALID_ARG', /more than the limit of 8/);
    expect(jsonDataToTensorBytes('INT32', [2], [1, 2], { maxBytes: 8 }).length).toBe(8);
  });
});

describe('tensorBytesToJsonData', () => {
  it('renders flat values per datatype', () => {
    expect(tensorBytesToJsonData(asTensor('BOOL', [2, 1], new Uint8Array([1, 0])))).toEqual([true, false]);
    expect(tensorBytesToJsonData(asTensor('INT16', [2], typedArrayToBytes(new Int16Array([-5, 7]))))).toEqual([-5, 7]);
    expect(tensorBytesToJsonData(asTensor('FP32', [1], typedArrayToBytes(new Float32Array([0.5]))))).toEqual([0.5]);
    expect(tensorBytesToJsonData(asTensor('BYTES', [2], encodeBytesElements(['a', 'b'])))).toEqual(['a', 'b']);
  });

  it('keeps 64-bit integers exact: numbers when safe, bigint otherwise', () => {
    const data = typedArrayToBytes(new BigInt64Array([1n, -(2n ** 63n), 2n ** 53n + 1n]));
    expect(tensorBytesToJsonData(asTensor('INT64', [3], data))).toEqual([1, -(2n ** 63n), 2n ** 53n + 1n]);
  });

  it('refuses FP16/BF16 and inconsistent tensors', () => {
    expectTesseraError(() => tensorBytesToJsonData({ name: 'y', datatype: 'FP16', shape: [1], data: new Uint8Array(2) }), 'INVALID_ARG', /sending FP16 data via JSON is not supported. Please use the binary data format for output 'y'/);
    expectTesseraError(() => tensorBytesToJsonData(asTensor('INT32', [2], new Uint8Array(4))), 'INVALID_ARG', /byte size mismatch for output 'x'/);
  });
});
