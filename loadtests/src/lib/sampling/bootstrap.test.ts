import { describe, expect, it } from 'vitest';
import { bootstrapInterval, p99Ratio, rateRatio, type RateUnit } from './bootstrap.js';

/** 1..n, so a p99 is the value at the 99th percent rank. */
const range = (n: number, scale = 1): number[] => Array.from({ length: n }, (_, i) => (i + 1) * scale);

describe('bootstrapInterval', () => {
  it('gives the measured ratio and an interval around it that narrows with more samples', () => {
    const few = bootstrapInterval([[range(50, 2)], [range(50)]], p99Ratio, { seed: 3 });
    const many = bootstrapInterval([[range(1000, 2)], [range(1000)]], p99Ratio, { seed: 3 });
    expect(few.value).toBe(2);
    expect(many.value).toBe(2);
    for (const i of [few, many]) {
      expect(i.low).toBeLessThanOrEqual(i.value);
      expect(i.high).toBeGreaterThanOrEqual(i.value);
    }
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
    expect(many.low).toBeGreaterThan(1.8);
    expect(many.high).toBeLessThan(2.2);
  });

  it('one slow sample in 80 sets a p99, and the interval shows how much it rests on it', () => {
    const idle = range(80);
    const loaded = [...range(79), 400];
    const interval = bootstrapInterval([[loaded], [idle]], p99Ratio, { seed: 1 });
    // The p99 of 80 is the largest: 400 / 80.
    expect(interval.value).toBe(5);
    // Draws without the outlier read near 1.
    expect(interval.low).toBeLessThan(1.2);
  });

  it('resamples within each window: a window of constant values stays constant', () => {
    const interval = bootstrapInterval([[[5, 5, 5], [5]], [[1, 1], [1, 1, 1]]], p99Ratio);
    expect(interval).toMatchObject({ value: 5, low: 5, high: 5 });
  });

  it('is the same for the same seed, and NaN bounds for a side without samples', () => {
    const sides = [[range(40, 3)], [range(40)]];
    expect(bootstrapInterval(sides, p99Ratio, { seed: 9 })).toEqual(bootstrapInterval(sides, p99Ratio, { seed: 9 }));
    const empty = bootstrapInterval([[range(10)], [[]]], p99Ratio);
    expect(empty.low).toBeNaN();
    expect(empty.high).toBeNaN();
  });

  it('rejects a level outside (0, 1) and a non-integer count of draws', () => {
    expect(() => bootstrapInterval([[[1]], [[1]]], p99Ratio, { level: 1 })).toThrow(RangeError);
    expect(() => bootstrapInterval([[[1]], [[1]]], p99Ratio, { reps: 0.5 })).toThrow(RangeError);
  });
});

describe('rateRatio', () => {
  it('sums tokens and seconds per side (a long batch weighs as its length)', () => {
    const continuous: RateUnit[] = [
      { tokens: 100, seconds: 1 },
      { tokens: 300, seconds: 1 },
    ];
    const batches: RateUnit[] = [
      { tokens: 100, seconds: 1 },
      { tokens: 100, seconds: 3 },
    ];
    expect(rateRatio([continuous, batches])).toBe(200 / 50);
  });
});
