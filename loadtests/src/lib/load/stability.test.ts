import { describe, expect, it } from 'vitest';
import { isStable } from './stability.js';

const w = (inferencesPerSec: number, latencyUs: number) => ({ inferencesPerSec, latencyUs });

describe('isStable', () => {
  it('needs three windows', () => {
    expect(isStable([w(100, 1000), w(100, 1000)], 10)).toBe(false);
    expect(isStable([w(100, 1000), w(100, 1000), w(100, 1000)], 10)).toBe(true);
  });

  it('compares max / min of the last three against 1 + threshold, for throughput and latency', () => {
    expect(isStable([w(100, 1000), w(110, 1000), w(105, 1000)], 10)).toBe(true);
    expect(isStable([w(100, 1000), w(110.5, 1000), w(105, 1000)], 10)).toBe(false);
    expect(isStable([w(100, 1000), w(100, 1100), w(100, 1050)], 10)).toBe(true);
    expect(isStable([w(100, 1000), w(100, 1101), w(100, 1050)], 10)).toBe(false);
    expect(isStable([w(100, 1000), w(100, 1150), w(100, 1050)], 20)).toBe(true);
  });

  it('looks only at the last three', () => {
    expect(isStable([w(1, 99_000), w(100, 1000), w(101, 1010), w(102, 1020)], 10)).toBe(true);
    expect(isStable([w(100, 1000), w(101, 1010), w(102, 1020), w(500, 1000)], 10)).toBe(false);
  });

  it('never calls windows without completions stable', () => {
    expect(isStable([w(0, 1000), w(0, 1000), w(0, 1000)], 10)).toBe(false);
    expect(isStable([w(100, Number.NaN), w(100, Number.NaN), w(100, Number.NaN)], 10)).toBe(false);
  });
});
