import { describe, expect, it } from 'vitest';
import type { CachedResponse } from '../../core/ports/index.js';
import { decodeCacheEnvelope, encodeCacheEnvelope } from './cache-envelope.js';
import { createMemoryResponseCache } from './memory-response-cache.js';

const entry = (size: number, fill = 1): CachedResponse => ({
  body: new Uint8Array(size).fill(fill),
  headers: {},
  computeUs: 5,
  storedAt: 0,
});

function fakeClock() {
  return { t: 0, now() { return this.t; } };
}

describe('createMemoryResponseCache', () => {
  it('stores a private copy and expires it after the TTL', async () => {
    const clock = fakeClock();
    const cache = createMemoryResponseCache({ clock });
    const value = entry(4);
    await cache.set('k', value, 2);
    value.body.fill(9); // the caller reusing its buffer must not change the entry
    expect((await cache.get('k'))?.body).toEqual(new Uint8Array(4).fill(1));
    clock.t = 1500;
    expect((await cache.get('k'))?.remainingMs).toBe(500);
    clock.t = 1999;
    expect(await cache.get('k')).toBeDefined();
    clock.t = 2000;
    expect(await cache.get('k')).toBeUndefined();
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  it('evicts the least recently used entries to stay within maxBytes; a read refreshes recency', async () => {
    const cache = createMemoryResponseCache({ maxBytes: 3 * 1200 });
    await cache.set('a', entry(1000), 60);
    await cache.set('b', entry(1000), 60);
    await cache.set('c', entry(1000), 60);
    await cache.get('a'); // now b is the least recently used
    await cache.set('d', entry(1000), 60);
    expect(await cache.get('b')).toBeUndefined();
    for (const key of ['a', 'c', 'd']) expect(await cache.get(key)).toBeDefined();
    expect(cache.bytes).toBeLessThanOrEqual(3 * 1200);
  });

  it('does not store an entry bigger than the whole budget (and drops the old one), nor TTL 0', async () => {
    const cache = createMemoryResponseCache({ maxBytes: 1000 });
    await cache.set('k', entry(10), 60);
    await cache.set('k', entry(2000), 60);
    expect(await cache.get('k')).toBeUndefined();
    await cache.set('z', entry(10), 0);
    expect(cache.size).toBe(0);
  });

  it('replacing a key recharges its bytes', async () => {
    const cache = createMemoryResponseCache();
    await cache.set('k', entry(100), 60);
    const before = cache.bytes;
    await cache.set('k', entry(300), 60);
    expect(cache.bytes - before).toBe(200);
    expect(cache.size).toBe(1);
  });

  it('refuses a bad budget', () => {
    expect(() => createMemoryResponseCache({ maxBytes: -1 })).toThrow(/maxBytes/);
  });
});

describe('cache envelope', () => {
  it('round-trips and rejects foreign bytes', () => {
    const value: CachedResponse = { body: new Uint8Array([1, 2, 3]), headers: { a: 'b' }, computeUs: 7, storedAt: 9 };
    expect(decodeCacheEnvelope(encodeCacheEnvelope(value))).toEqual(value);
    expect(decodeCacheEnvelope(new TextEncoder().encode('{"h":{}}'))).toBeUndefined();
    const bad = encodeCacheEnvelope(value);
    bad[9] = 0xff; // corrupt the metadata JSON
    expect(decodeCacheEnvelope(bad)).toBeUndefined();
  });
});
