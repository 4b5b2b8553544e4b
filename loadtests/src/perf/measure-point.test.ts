import { describe, expect, it } from 'vitest';
import { mergeWindows, type LoadWindow } from '../lib/load/load-window.js';
import { tierFigures } from './measure-point.js';

const window = (latenciesUs: number[], latencyTags: number[], errorsByTag: number[]): LoadWindow => ({
  windowS: 1,
  latenciesUs,
  latencyTags,
  errors: errorsByTag.reduce((a, b) => a + b, 0),
  errorsByTag,
  dropped: 1,
  sent: latenciesUs.length,
  sendUsTotal: 10,
  recvUsTotal: 20,
});

describe('merged windows and per-tier figures', () => {
  const merged = mergeWindows([window([1000, 60_000], [0, 1], [0, 2]), window([2000, 3000], [0, 0], [1, 0])]);

  it('sums counts and concatenates samples', () => {
    expect(merged).toMatchObject({ windowS: 2, errors: 3, errorsByTag: [1, 2], dropped: 2, sent: 4, sendUsTotal: 20 });
    expect(merged.latenciesUs).toEqual([1000, 60_000, 2000, 3000]);
    expect(merged.latencyTags).toEqual([0, 1, 0, 0]);
  });

  it('splits by tier and counts goodput within the SLO', () => {
    const [premium, free] = tierFigures(merged, ['premium', 'free'], 50);
    expect(premium).toMatchObject({ tier: 'premium', completed: 3, errors: 1, requestsPerSec: 1.5, goodputPerSec: 1.5 });
    expect(free).toMatchObject({ tier: 'free', completed: 1, errors: 2, goodputPerSec: 0 });
    expect(tierFigures(merged, ['premium', 'free'], undefined)[1]?.goodputPerSec).toBe(0.5);
  });
});
