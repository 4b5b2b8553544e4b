import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bf16BitsToNumber,
  bf16BytesToNumbers,
  fp16BitsToNumber,
  fp16BytesToNumbers,
  numberToBf16Bits,
  numberToFp16Bits,
  numbersToBf16Bytes,
  numbersToFp16Bytes,
} from './half-float.js';

describe('FP16', () => {
  it('encodes well-known values', () => {
    expect(numberToFp16Bits(1)).toBe(0x3c00);
    expect(numberToFp16Bits(-2)).toBe(0xc000);
    expect(numberToFp16Bits(65504)).toBe(0x7bff);
    expect(numberToFp16Bits(65520)).toBe(0x7c00); // halfway to 65536 rounds to even: infinity
    expect(numberToFp16Bits(1e6)).toBe(0x7c00);
    expect(numberToFp16Bits(-Infinity)).toBe(0xfc00);
    expect(numberToFp16Bits(2 ** -24)).toBe(0x0001);
    expect(numberToFp16Bits(2 ** -25)).toBe(0x0000); // tie rounds to even (zero)
    expect(numberToFp16Bits(2 ** -14)).toBe(0x0400);
    expect(numberToFp16Bits(-0)).toBe(0x8000);
    expect(numberToFp16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie to even
    expect(numberToFp16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(fp16BitsToNumber(numberToFp16Bits(Number.NaN))).toBeNaN();
  });

  it('decodes every bit pattern and re-encodes it unchanged (NaNs aside)', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = fp16BitsToNumber(bits);
      if (!Number.isNaN(value) && numberToFp16Bits(value) !== bits) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('rounds to the nearest representable value', () => {
    fc.assert(
      fc.property(fc.double({ min: -60000, max: 60000, noNaN: true }), (x) => {
        const rounded = fp16BitsToNumber(numberToFp16Bits(x));
        // Half a unit in the last place of the result's binade bounds the error.
        const ulp = 2 ** (Math.max(Math.floor(Math.log2(Math.abs(rounded) || 2 ** -14)), -14) - 10);
        expect(Math.abs(rounded - x)).toBeLessThanOrEqual(ulp / 2 + ulp * 1e-9);
      }),
      { numRuns: 2000 },
    );
  });

  it('converts byte arrays little-endian', () => {
    const bytes = numbersToFp16Bytes([1, -2, 0.5]);
    expect(Array.from(bytes)).toEqual([0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38]);
    expect(fp16BytesToNumbers(bytes)).toEqual([1, -2, 0.5]);
  });
});

describe('BF16', () => {
  it('is the top half of float32, rounded to nearest even', () => {
    expect(numberToBf16Bits(1)).toBe(0x3f80);
    expect(numberToBf16Bits(-2)).toBe(0xc000);
    expect(numberToBf16Bits(3.140625)).toBe(0x4049);
    expect(numberToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // tie to even
    expect(numberToBf16Bits(1e39)).toBe(0x7f80);
    expect(numberToBf16Bits(2 ** -133)).toBe(0x0001);
    expect(bf16BitsToNumber(0x7f80)).toBe(Infinity);
    expect(bf16BitsToNumber(0x7fc0)).toBeNaN();
  });

  it('re-encodes every decoded bit pattern unchanged (NaNs aside)', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = bf16BitsToNumber(bits);
      if (!Number.isNaN(value) && numberToBf16Bits(value) !== bits) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('agrees with float32 truncation for values exactly representable', () => {
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    for (const v of [0.15625, -1024, 3.5, 1.5 * 2 ** -100]) {
      f32[0] = v;
      expect(numberToBf16Bits(v)).toBe((u32[0] as number) >>> 16);
    }
    expect(bf16BytesToNumbers(numbersToBf16Bytes([1.5, -0.25]))).toEqual([1.5, -0.25]);
  });
});
