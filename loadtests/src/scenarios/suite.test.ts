import { describe, expect, it } from 'vitest';
import { sampleIntervalMs } from './soak.js';
import { scaledSoakMinutes } from './suite.js';

describe('scaledSoakMinutes', () => {
  it('gives the soak what is left of the budget, within bounds', () => {
    // 15 min budget, 12 min spent: 3 min minus the 45 s reserve.
    expect(scaledSoakMinutes(15, 12 * 60, false)).toBeCloseTo(2.25);
    expect(scaledSoakMinutes(15, 15 * 60, false)).toBe(0.5);
    expect(scaledSoakMinutes(60, 60, false)).toBe(10);
    expect(scaledSoakMinutes(3, 2 * 60, true)).toBeCloseTo(1 / 3);
    expect(scaledSoakMinutes(3, 3 * 60, true)).toBeCloseTo(1 / 6);
  });
});

describe('sampleIntervalMs', () => {
  it('takes about 60 samples, every 1 to 10 s', () => {
    expect(sampleIntervalMs(10 * 60_000)).toBe(10_000);
    expect(sampleIntervalMs(2 * 60_000)).toBe(2000);
    expect(sampleIntervalMs(20_000)).toBe(1000);
  });
});
