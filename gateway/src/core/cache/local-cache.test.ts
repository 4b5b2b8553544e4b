import { describe, expect, it } from 'vitest';
import type { CachedResponse } from '../ports/index.js';
import { LocalCache } from './local-cache.js';

const response = (bytes: number): CachedResponse => ({
  body: new Uint8Array(bytes),
  headers: { 'content-type': 'application/octet-stream' },
  computeUs: 10,
  storedAt: 0,
});

describe('LocalCache', () => {
  it('serves an entry until its expiry, a copy of what it was given', () => {
    const cache = new LocalCache(1 << 20);
    const original = response(4);
    cache.set('k', original, 1000, 0);
    original.body[0] = 7; // the caller may reuse its buffer
    expect(cache.get('k', 999)?.body[0]).toBe(0);
    expect(cache.remainingMs('k', 400)).toBe(600);
    expect(cache.get('k', 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entries to stay within its byte budget', () => {
    const cache = new LocalCache(3 * 1300);
    for (const key of ['a', 'b', 'c']) cache.set(key, response(1000), 10_000, 0);
    cache.get('a', 1); // a is now the most recently used; b the least
    cache.set('d', response(1000), 10_000, 2);
    expect(['a', 'b', 'c', 'd'].filter((k) => cache.peek(k, 3) !== undefined)).toEqual(['a', 'c', 'd']);
    expect(cache.bytes).toBeLessThanOrEqual(3 * 1300);
  });

  it('drops expired entries as new ones arrive, so one-off responses do not fill the budget with dead entries', () => {
    const cache = new LocalCache(64 << 20);
    // 100 entries per second of time, each living 5 s, for 60 s: never more than ~5 s worth held.
    let now = 0;
    for (let i = 0; i < 6000; i++) {
      now = i * 10;
      cache.set(`k${i}`, response(1000), now + 5000, now);
    }
    expect(cache.size).toBeLessThanOrEqual(520);
    expect(cache.bytes).toBeLessThan(520 * 1300);
    // The live ones are all still there.
    expect(cache.peek('k5999', now)).toBeDefined();
    expect(cache.peek('k5501', now)).toBeDefined();
  });

  it('does not store an entry already expired or bigger than the whole budget', () => {
    const cache = new LocalCache(500);
    cache.set('old', response(4), 10, 10);
    cache.set('big', response(1000), 100, 0);
    expect(cache.size).toBe(0);
  });
});
