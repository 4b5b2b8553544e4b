import { describe, expect, it } from 'vitest';
import { median, percentile, summarizeLatencies } from './percentiles.js';

describe('percentile', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('uses the nearest rank', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 90)).toBe(90);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
  });

  it('is NaN without samples and rejects bad p', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('summarizeLatencies', () => {
  it('sorts numerically without touching the input', () => {
    const input = [300, 5, 40, 1000, 2];
    const s = summarizeLatencies(input);
    expect(input).toEqual([300, 5, 40, 1000, 2]);
    expect(s).toMatchObject({ count: 5, minUs: 2, maxUs: 1000, p50Us: 40, p99Us: 1000 });
    expect(s.avgUs).toBeCloseTo(269.4);
  });

  it('handles no samples', () => {
    expect(summarizeLatencies([])).toMatchObject({ count: 0, p50Us: Number.NaN });
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones, sorting numerically', () => {
    expect(median([300, 5, 40])).toBe(40);
    expect(median([1000, 2, 300, 5])).toBe(152.5);
    expect(median([])).toBeNaN();
  });
});
