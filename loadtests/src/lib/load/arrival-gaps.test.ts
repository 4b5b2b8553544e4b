import { describe, expect, it } from 'vitest';
import { arrivalGaps, mulberry32 } from './arrival-gaps.js';

describe('arrivalGaps', () => {
  it('spaces constant arrivals evenly', () => {
    const next = arrivalGaps('constant', 200);
    expect([next(), next(), next()]).toEqual([5, 5, 5]);
  });

  it('draws exponential gaps whose mean and spread match the rate', () => {
    const next = arrivalGaps('poisson', 100, 42);
    const gaps = Array.from({ length: 50_000 }, next);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const variance = gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length;
    expect(gaps.every((g) => g >= 0 && Number.isFinite(g))).toBe(true);
    // Exponential: mean = sd = 10 ms; 50k samples put the sample mean within ~0.5% (1 sigma).
    expect(mean).toBeGreaterThan(9.8);
    expect(mean).toBeLessThan(10.2);
    expect(Math.sqrt(variance)).toBeGreaterThan(9.6);
    expect(Math.sqrt(variance)).toBeLessThan(10.4);
    // P(gap > mean) = 1/e for an exponential.
    const above = gaps.filter((g) => g > 10).length / gaps.length;
    expect(Math.abs(above - Math.exp(-1))).toBeLessThan(0.01);
  });

  it('repeats a sequence for a seed and differs across seeds', () => {
    const a = arrivalGaps('poisson', 10, 7);
    const b = arrivalGaps('poisson', 10, 7);
    const c = arrivalGaps('poisson', 10, 8);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
  });

  it('rejects a rate that is not positive', () => {
    expect(() => arrivalGaps('constant', 0)).toThrow(RangeError);
    expect(() => arrivalGaps('poisson', Number.NaN)).toThrow(RangeError);
  });

  it('gives uniforms in [0, 1)', () => {
    const u = mulberry32(3);
    const values = Array.from({ length: 10_000 }, u);
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(values.reduce((a, b) => a + b, 0) / values.length).toBeCloseTo(0.5, 1);
  });
});
