import { describe, expect, it } from 'vitest';
import { encodeBytesElements } from './bytes-elements.js';
import { numbersToFp16Bytes } from './half-float.js';
import type { Tensor } from './tensor.js';
import { expectTesseraError, listOf } from './test-helpers.js';
import { tensorToNumbers, tensorToTypedArray, typedArrayToBytes } from './typed-array.js';
import { validateTensorData } from './validate.js';

const fp32 = (values: number[], shape = [values.length]): Tensor => ({
  name: 't',
  datatype: 'FP32',
  shape,
  data: typedArrayToBytes(new Float32Array(values)),
});

describe('typed-array views', () => {
  it('views aligned data in place', () => {
    const t = fp32([1, 2.5, -3]);
    const view = tensorToTypedArray(t);
    expect(view).toBeInstanceOf(Float32Array);
    expect(listOf(view)).toEqual([1, 2.5, -3]);
    expect(view.buffer).toBe(t.data.buffer);
  });

  it('copies data whose byte offset is not aligned', () => {
    const backing = new Uint8Array(13);
    backing.set(typedArrayToBytes(new Int32Array([7, -8, 9])), 1);
    const t: Tensor = { name: 't', datatype: 'INT32', shape: [3], data: backing.subarray(1) };
    const view = tensorToTypedArray(t);
    expect(listOf(view)).toEqual([7, -8, 9]);
    expect(view.buffer).not.toBe(backing.buffer);
  });

  it('gives bigint arrays for 64-bit integers and raw bits for FP16', () => {
    const big: Tensor = { name: 'b', datatype: 'UINT64', shape: [1], data: typedArrayToBytes(new BigUint64Array([2n ** 64n - 1n])) };
    expect(tensorToTypedArray(big)).toEqual(new BigUint64Array([2n ** 64n - 1n]));
    const half: Tensor = { name: 'h', datatype: 'FP16', shape: [2], data: numbersToFp16Bytes([1, 2]) };
    expect(listOf(tensorToTypedArray(half))).toEqual([0x3c00, 0x4000]);
    expect(tensorToNumbers(half)).toEqual([1, 2]);
    expect(tensorToNumbers(big)).toEqual([2 ** 64]);
    expect(tensorToNumbers({ name: 'x', datatype: 'BOOL', shape: [2], data: new Uint8Array([0, 5]) })).toEqual([0, 1]);
  });

  it('refuses BYTES and inconsistent tensors', () => {
    const bytes: Tensor = { name: 's', datatype: 'BYTES', shape: [1], data: encodeBytesElements(['x']) };
    expectTesseraError(() => tensorToTypedArray(bytes), 'INVALID_ARG', /BYTES tensor 's' has no typed-array view/);
    expectTesseraError(() => tensorToTypedArray(fp32([1, 2], [3])), 'INVALID_ARG', /expected 12, got 8/);
  });
});

describe('validateTensorData', () => {
  it('accepts consistent tensors of fixed and variable size', () => {
    validateTensorData(fp32([1, 2, 3, 4], [2, 2]));
    validateTensorData({ name: 's', datatype: 'BYTES', shape: [2, 1], data: encodeBytesElements(['a', 'bc']) });
    validateTensorData({ name: 'e', datatype: 'FP32', shape: [0, 3], data: new Uint8Array(0) });
  });

  it('names the tensor and the mismatch', () => {
    expectTesseraError(() => validateTensorData(fp32([1, 2, 3], [2, 2]), "input 'x' for model 'm'"), 'INVALID_ARG', /byte size mismatch for input 'x' for model 'm': expected 16, got 12/);
    const two = encodeBytesElements(['a', 'b']);
    expectTesseraError(() => validateTensorData({ name: 's', datatype: 'BYTES', shape: [3], data: two }), 'INVALID_ARG', /shape needs 3 BYTES elements, data holds 2/);
    expectTesseraError(() => validateTensorData({ name: 's', datatype: 'BYTES', shape: [1], data: two }), 'INVALID_ARG', /shape needs 1 BYTES elements, data holds more/);
    expectTesseraError(() => validateTensorData({ name: 's', datatype: 'BYTES', shape: [1], data: new Uint8Array([5, 0, 0, 0]) }), 'INVALID_ARG', /truncated/);
    expectTesseraError(() => validateTensorData({ name: 'q', datatype: 'FP8' as never, shape: [1], data: new Uint8Array(1) }), 'INVALID_ARG', /invalid datatype 'FP8'/);
    expectTesseraError(() => validateTensorData({ name: 'n', datatype: 'FP32', shape: [-1], data: new Uint8Array(0) }), 'INVALID_ARG', /specified/);
  });
});
