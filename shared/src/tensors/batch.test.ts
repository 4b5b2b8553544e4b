import { describe, expect, it } from 'vitest';
import { concatBatch, splitBatch } from './batch.js';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.js';
import type { Tensor } from './tensor.js';
import { expectTesseraError, listOf } from './test-helpers.js';
import { tensorToTypedArray, typedArrayToBytes } from './typed-array.js';

const int32 = (name: string, shape: number[], values: number[]): Tensor => ({
  name,
  datatype: 'INT32',
  shape,
  data: typedArrayToBytes(new Int32Array(values)),
});
const strings = (shape: number[], values: string[]): Tensor => ({
  name: 's',
  datatype: 'BYTES',
  shape,
  data: encodeBytesElements(values),
});
const text = (t: Tensor): string[] => decodeBytesElements(t.data).map((e) => new TextDecoder().decode(e));

describe('concatBatch / splitBatch', () => {
  it('concatenates fixed-size tensors along dim 0 and splits them back', () => {
    const joined = concatBatch([int32('a', [1, 2], [1, 2]), int32('b', [2, 2], [3, 4, 5, 6])]);
    expect(joined.name).toBe('a');
    expect(joined.shape).toEqual([3, 2]);
    expect(listOf(tensorToTypedArray(joined))).toEqual([1, 2, 3, 4, 5, 6]);
    const [first, second, empty] = splitBatch(joined, [2, 1, 0]);
    expect(first?.shape).toEqual([2, 2]);
    expect(listOf(tensorToTypedArray(first as Tensor))).toEqual([1, 2, 3, 4]);
    expect(listOf(tensorToTypedArray(second as Tensor))).toEqual([5, 6]);
    expect(empty?.shape).toEqual([0, 2]);
    expect(empty?.data.length).toBe(0);
  });

  it('gives pieces of one size one shape array, and each piece its own rows', () => {
    const joined = int32('a', [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]);
    const [a, b, c, d] = splitBatch(joined, [1, 1, 2, 0]);
    expect(a?.shape).toBe(b?.shape);
    expect(a?.shape).toEqual([1, 2]);
    expect(c?.shape).toEqual([2, 2]);
    expect(d?.shape).toEqual([0, 2]);
    expect(listOf(tensorToTypedArray(b as Tensor))).toEqual([3, 4]);
    expect(listOf(tensorToTypedArray(c as Tensor))).toEqual([5, 6, 7, 8]);
  });

  it('handles BYTES rows of different byte lengths', () => {
    const joined = concatBatch([strings([1, 2], ['a', 'bcd']), strings([2, 2], ['', 'xy', 'long text', 'z'])]);
    expect(joined.shape).toEqual([3, 2]);
    const parts = splitBatch(joined, [1, 2]);
    expect(text(parts[0] as Tensor)).toEqual(['a', 'bcd']);
    expect(text(parts[1] as Tensor)).toEqual(['', 'xy', 'long text', 'z']);
    expect(parts[1]?.shape).toEqual([2, 2]);
  });

  it('refuses what cannot be batched', () => {
    expectTesseraError(() => concatBatch([]), 'INVALID_ARG', /empty list/);
    expectTesseraError(() => concatBatch([int32('a', [], [1])]), 'INVALID_ARG', /no batch dimension/);
    expectTesseraError(() => concatBatch([int32('a', [1, 2], [1, 2]), int32('b', [1, 1], [1])]), 'INVALID_ARG', /shape \[1,1\] with shape \[1,2\]/);
    expectTesseraError(() => concatBatch([int32('a', [1], [1]), strings([1], ['x'])]), 'INVALID_ARG', /BYTES with INT32/);
    expectTesseraError(() => concatBatch([int32('a', [2], [1])]), 'INVALID_ARG', /byte size mismatch/);
    expectTesseraError(() => splitBatch(int32('a', [2], [1, 2]), [1, 2]), 'INVALID_ARG', /add up to 3, but tensor 'a' has batch 2/);
    expectTesseraError(() => splitBatch(int32('a', [2], [1, 2]), [-1, 3]), 'INVALID_ARG', /invalid split size -1/);
    expectTesseraError(() => splitBatch(int32('a', [], [1]), [1]), 'INVALID_ARG', /no batch dimension/);
  });
});
