import { describe, expect, it } from 'vitest';
import { encodeBytesElements } from '../../../../shared/src/tensors/index.js';
import { inputForModel, outputFromModel } from './model-tensors.js';

const bytesOf = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)];

describe('model tensor conversions', () => {
  it('gives inputs as typed arrays over the transferred buffer, BYTES as Uint8Array elements', () => {
    const buffer = new Int32Array([1, -2]).buffer;
    const input = inputForModel({ name: 'x', datatype: 'INT32', shape: [2], data: buffer });
    expect(input.data).toBeInstanceOf(Int32Array);
    expect((input.data as Int32Array).buffer).toBe(buffer);
    const strings = inputForModel({ name: 's', datatype: 'BYTES', shape: [2], data: encodeBytesElements(['a', 'bc']).buffer as ArrayBuffer });
    expect((strings.data as Uint8Array[]).map((e) => new TextDecoder().decode(e))).toEqual(['a', 'bc']);
  });

  it('accepts typed arrays and plain arrays, copying model-owned memory', () => {
    const own = new Float32Array([1.5, 2]);
    const wire = outputFromModel('m', 'y', { datatype: 'FP32', shape: [2], data: own });
    expect(wire.data).not.toBe(own.buffer);
    expect(bytesOf(wire.data)).toEqual(bytesOf(own.buffer));
    expect(bytesOf(outputFromModel('m', 'h', { datatype: 'FP16', shape: [2], data: [1, -2] }).data)).toEqual([0x00, 0x3c, 0x00, 0xc0]);
    expect(bytesOf(outputFromModel('m', 'b', { datatype: 'BOOL', shape: [3], data: [true, false, 1] }).data)).toEqual([1, 0, 1]);
    expect([...new BigInt64Array(outputFromModel('m', 'i', { datatype: 'INT64', shape: [1], data: [7] }).data)]).toEqual([7n]);
    expect(bytesOf(outputFromModel('m', 's', { datatype: 'BYTES', shape: [1], data: ['hi'] }).data)).toEqual([2, 0, 0, 0, 104, 105]);
  });

  it('names the model and output when a returned tensor is wrong', () => {
    expect(() => outputFromModel('m', 'y', { datatype: 'FP32', shape: [2], data: new Float64Array(2) })).toThrow(
      "model 'm': output 'y' is FP32, so its data must be a Float32Array or an array, got Float64Array",
    );
    expect(() => outputFromModel('m', 'y', { datatype: 'INT32', shape: [-1], data: [] })).toThrow(/output 'y' has an invalid shape \[-1\]/);
    expect(() => outputFromModel('m', 's', { datatype: 'BYTES', shape: [2], data: ['a'] })).toThrow(
      "model 'm': output 's' has 1 elements, but its shape needs 2",
    );
    expect(() => outputFromModel('m', 'i', { datatype: 'INT64', shape: [1], data: [1.5] })).toThrow(/output 'i' has data that cannot be INT64/);
  });
});
