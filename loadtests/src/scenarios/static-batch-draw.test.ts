/**
 * The whole-request baseline's batches in mirrored pairs: each batch is still 32 lengths from 8..256, a pair's
 * lengths always add up to its expected count, and a plan is whole pairs only.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { MAX_TOKENS, MIN_TOKENS, outputLength } from './llm-stream-client.js';
import { mirroredBatchLengths, pairedBatchLengths } from './static-batch-draw.js';

const sum = (values: readonly number[]) => values.reduce((s, v) => s + v, 0);

describe('mirrored whole-request batches', () => {
  it("draws a pair's first batch with the baseline's own length draw, and mirrors each row in the second", () => {
    const [first, mirror] = mirroredBatchLengths(mulberry32(3), 32);
    const plain = mulberry32(3);
    expect(first).toEqual(Array.from({ length: 32 }, () => outputLength(plain)));
    expect(mirror).toEqual(first.map((l) => MIN_TOKENS + MAX_TOKENS - l));
  });

  it('keeps every length within 8..256 and every pair at 2 × 32 × 132 useful tokens', () => {
    const plan = pairedBatchLengths(mulberry32(11), 32, 40);
    expect(plan).toHaveLength(40);
    for (const lengths of plan) {
      expect(lengths).toHaveLength(32);
      for (const l of lengths) expect(l >= MIN_TOKENS && l <= MAX_TOKENS && Number.isInteger(l)).toBe(true);
    }
    for (let b = 0; b < plan.length; b += 2) expect(sum(plan[b] as number[]) + sum(plan[b + 1] as number[])).toBe(2 * 32 * ((MIN_TOKENS + MAX_TOKENS) / 2));
  });

  it("leaves each batch's longest member distributed as a lone batch's: mirrored batches' mean longest matches", () => {
    // The mirror's longest is 264 minus the first's shortest: same law. Over 2000 pairs their means agree closely.
    const plan = pairedBatchLengths(mulberry32(5), 32, 4000);
    const longest = (parity: number) => plan.filter((_, i) => i % 2 === parity).map((b) => Math.max(...b));
    const mean = (v: number[]) => sum(v) / v.length;
    expect(Math.abs(mean(longest(0)) - mean(longest(1)))).toBeLessThan(1);
    expect(Math.abs(mean(longest(0)) - (MIN_TOKENS + ((MAX_TOKENS - MIN_TOKENS) * 32) / 33))).toBeLessThan(1);
  });

  it('refuses a plan that is not whole pairs', () => {
    for (const batches of [0, 1, 3, 2.5, Number.NaN]) expect(() => pairedBatchLengths(mulberry32(1), 32, batches)).toThrow(RangeError);
  });
});
