import { describe, expect, it } from 'vitest';
import { numberToFp16Bits } from '../../../../shared/src/tensors/index.js';
import { outputDisagreement } from './output-agreement.js';

const f32 = (values: number[], dims = [values.length]) => ({ type: 'float32', dims, data: Float32Array.from(values) });

describe('GPU outputs against the CPU', () => {
  it('accepts floats within absolute plus relative tolerance', () => {
    expect(outputDisagreement('Y', f32([1.0005, -2000.9, 0]), f32([1, -2000, 0.0009]), 1e-3)).toBeUndefined();
  });

  it('names the first element over the tolerance', () => {
    expect(outputDisagreement('Y', f32([1, 2.01, 3]), f32([1, 2, 3]), 1e-3)).toMatch(
      /^output 'Y' element 1 is 2\.0099.* on the GPU but 2 on the CPU \(tolerance 0\.001\)$/,
    );
  });

  it('takes NaN only against NaN', () => {
    expect(outputDisagreement('Y', f32([NaN]), f32([NaN]), 1e-3)).toBeUndefined();
    expect(outputDisagreement('Y', f32([NaN]), f32([1]), 1e-3)).toMatch(/element 0 is NaN/);
    expect(outputDisagreement('Y', f32([1]), f32([NaN]), 1e-3)).toMatch(/element 0 is 1 on the GPU but NaN/);
  });

  it('reads float16 as numbers', () => {
    const h = (values: number[]) => ({ type: 'float16', dims: [values.length], data: Uint16Array.from(values, numberToFp16Bits) });
    expect(outputDisagreement('H', h([1, 2]), h([1, 2]), 1e-3)).toBeUndefined();
    expect(outputDisagreement('H', h([1, 2.5]), h([1, 2]), 1e-3)).toMatch(/element 1 is 2\.5 on the GPU but 2 on the CPU/);
  });

  it('compares integers, booleans and strings exactly', () => {
    const i64 = (values: bigint[]) => ({ type: 'int64', dims: [values.length], data: BigInt64Array.from(values) });
    expect(outputDisagreement('I', i64([1n, 2n]), i64([1n, 2n]), 1)).toBeUndefined();
    expect(outputDisagreement('I', i64([1n, 3n]), i64([1n, 2n]), 1)).toBe("output 'I' element 1 is 3 on the GPU but 2 on the CPU");
    const s = (values: string[]) => ({ type: 'string', dims: [values.length], data: values });
    expect(outputDisagreement('S', s(['a', 'b']), s(['a', 'c']), 1)).toBe("output 'S' element 1 is b on the GPU but c on the CPU");
  });

  it('refuses a different type, shape or length', () => {
    expect(outputDisagreement('Y', f32([1, 2], [2, 1]), f32([1, 2], [1, 2]), 1)).toBe(
      "output 'Y' has shape [2,1] on the GPU but [1,2] on the CPU",
    );
    expect(outputDisagreement('Y', { type: 'float64', dims: [1], data: [1] }, f32([1]), 1)).toBe(
      "output 'Y' has type float64 on the GPU but float32 on the CPU",
    );
    expect(outputDisagreement('Y', f32([1, 2], [2]), { type: 'float32', dims: [2], data: [1] }, 1)).toBe(
      "output 'Y' has 2 elements on the GPU but 1 on the CPU",
    );
  });
});
