import { describe, expect, it } from 'vitest';
import { CACHED_LOAD_BELOW, INFLIGHT_KEY, QUEUE_DEPTH_KEY, loadFields } from './load-trailer-values.js';

describe('loadFields', () => {
  it('gives one frozen field set per pair of figures, so the answer’s trailers are merged and encoded once', () => {
    const a = loadFields(3, 64);
    expect(a).toEqual({ [QUEUE_DEPTH_KEY]: '3', [INFLIGHT_KEY]: '64' });
    expect(Object.isFrozen(a)).toBe(true);
    expect(loadFields(3, 64)).toBe(a);
    expect(loadFields(64, 3)).toEqual({ [QUEUE_DEPTH_KEY]: '64', [INFLIGHT_KEY]: '3' });
    expect(loadFields(64, 3)).not.toBe(a);
  });

  it('states figures past the kept range exactly, without keeping them', () => {
    const big = loadFields(CACHED_LOAD_BELOW, 100_000);
    expect(big).toEqual({ [QUEUE_DEPTH_KEY]: String(CACHED_LOAD_BELOW), [INFLIGHT_KEY]: '100000' });
    expect(loadFields(CACHED_LOAD_BELOW, 100_000)).not.toBe(big);
    expect(loadFields(0, 0)).toEqual({ [QUEUE_DEPTH_KEY]: '0', [INFLIGHT_KEY]: '0' });
  });
});
