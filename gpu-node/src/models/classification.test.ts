/** classify(): Triton's top-K strings for each datatype family and shape case. */
import { describe, expect, it } from 'vitest';
import { decodeBytesElements, numbersToFp16Bytes, type Tensor } from '../../../shared/src/tensors/index.js';
import { classify } from './classification.js';

const strings = (t: Tensor) => decodeBytesElements(t.data).map((e) => Buffer.from(e).toString());

describe('classify', () => {
  it('formats floats with six decimals and integers plainly, ties by ascending index', () => {
    const fp16: Tensor = { name: 'P', datatype: 'FP16', shape: [3], data: numbersToFp16Bytes([0.5, 0.25, 0.5]) };
    expect(strings(classify(fp16, 2, false, ['a', 'b', 'c']))).toEqual(['0.500000:0:a', '0.500000:2:c']);
    const int8: Tensor = { name: 'P', datatype: 'INT8', shape: [3], data: new Uint8Array([0xff, 3, 1]) };
    expect(strings(classify(int8, 3, false))).toEqual(['3:1', '1:2', '-1:0']);
  });

  it('is [K] when a batching model output has no dims of its own, and rejects BYTES', () => {
    const perRow: Tensor = { name: 'P', datatype: 'FP32', shape: [3], data: new Uint8Array(new Float32Array([1, 3, 2]).buffer) };
    const result = classify(perRow, 2, true);
    expect(result).toMatchObject({ datatype: 'BYTES', shape: [2] });
    const bytes: Tensor = { name: 'S', datatype: 'BYTES', shape: [1], data: new Uint8Array([0, 0, 0, 0]) };
    expect(() => classify(bytes, 1, false)).toThrow(/not supported for output 'S' of datatype BYTES/);
  });
});
