/**
 * The Redis adapter against a real redis-server: round trip, TTL, and what happens when Redis dies
 * or stops answering. No assertion is about elapsed time: "fails fast" is shown by the KIND of error
 * (refused while disconnected, with a command timeout far longer than the test timeout, so a hang
 * would fail the test), and the timeout path by pausing the server.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../../shared/test/support/index.js';
import { createCacheLayer } from '../../core/cache/index.js';
import type { CachedResponse } from '../../core/ports/index.js';
import { encodeCacheEnvelope } from './cache-envelope.js';
import { createRedisResponseCache } from './redis-response-cache.js';

const HANG_GUARD_MS = 120_000; // longer than vitest's testTimeout: reaching it would fail the test

let server: RedisServer;
let client: Redis;
let admin: Redis;

function newClient(url: string): Redis {
  // What the app must do: no offline queue, few retries, quick reconnects.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  redis.on('error', () => {});
  return redis;
}

beforeAll(async () => {
  server = await startRedisServer();
  client = newClient(server.url);
  admin = newClient(server.url);
  await Promise.all([waitFor(() => client.status === 'ready'), waitFor(() => admin.status === 'ready')]);
});

afterAll(async () => {
  client.disconnect();
  admin.disconnect();
  await server.stop();
});

const entry = (body: number[]): CachedResponse => ({
  body: new Uint8Array(body),
  headers: { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': '2' },
  computeUs: 1234.5,
  storedAt: 1_700_000_000_000,
});

describe('createRedisResponseCache', () => {
  it('round-trips body bytes, headers, compute time and storedAt; a missing key is a miss', async () => {
    const cache = createRedisResponseCache({ redis: client, commandTimeoutMs: HANG_GUARD_MS });
    const value = entry([0x7b, 0x7d, 0, 255, 1, 2, 0x80]);
    await cache.set('tessera:cache:test:a', value, 60);
    const read = await cache.get('tessera:cache:test:a');
    expect(read).toEqual({ ...value, remainingMs: expect.any(Number) });
    expect(read!.body).toBeInstanceOf(Uint8Array);
    // How long Redis still keeps it: what the in-process copy must never outlive.
    expect(read!.remainingMs).toBeGreaterThan(0);
    expect(read!.remainingMs).toBeLessThanOrEqual(60_000);
    expect(await cache.get('tessera:cache:test:none')).toBeUndefined();
  });

  it('sets the TTL with PX, sub-second TTLs included, and replaces an existing entry', async () => {
    const cache = createRedisResponseCache({ redis: client });
    await cache.set('tessera:cache:test:ttl', entry([1]), 60);
    const pttl = await admin.pttl('tessera:cache:test:ttl');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    await cache.set('tessera:cache:test:ttl', entry([2]), 0.5);
    expect(await admin.pttl('tessera:cache:test:ttl')).toBeLessThanOrEqual(500);
    expect((await cache.get('tessera:cache:test:ttl'))?.body).toEqual(new Uint8Array([2]));
  });

  it('tells the remaining life of an entry, and nothing for a value without expiry', async () => {
    const cache = createRedisResponseCache({ redis: client });
    await cache.set('tessera:cache:test:short', entry([3]), 0.2);
    expect((await cache.get('tessera:cache:test:short'))?.remainingMs).toBeLessThanOrEqual(200);
    await admin.set('tessera:cache:test:forever', Buffer.from(encodeCacheEnvelope(entry([4]))));
    const forever = await cache.get('tessera:cache:test:forever');
    expect(forever?.body).toEqual(new Uint8Array([4]));
    expect(forever?.remainingMs).toBeUndefined();
  });

  it('reads a foreign or corrupt value as a miss', async () => {
    const cache = createRedisResponseCache({ redis: client });
    await admin.set('tessera:cache:test:foreign', 'hello');
    expect(await cache.get('tessera:cache:test:foreign')).toBeUndefined();
    const truncated = encodeCacheEnvelope(entry([1, 2, 3])).subarray(0, 10);
    await admin.set('tessera:cache:test:truncated', Buffer.from(truncated));
    expect(await cache.get('tessera:cache:test:truncated')).toBeUndefined();
  });

  it('times out a command that Redis does not answer (server paused)', async () => {
    const cache = createRedisResponseCache({ redis: client, commandTimeoutMs: 100 });
    // The pause ends by itself (CLIENT UNPAUSE would be paused too); the PING at the end waits for it.
    await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
    await expect(cache.get('tessera:cache:test:a')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/GET did not answer within 100 ms/),
    });
    await expect(cache.set('tessera:cache:test:a', entry([1]), 5)).rejects.toMatchObject({
      message: expect.stringMatching(/SET did not answer within 100 ms/),
    });
    expect(await admin.ping()).toBe('PONG');
  });

  it('throws at once while Redis is down, without waiting for the command timeout, and works again after', async () => {
    const cache = createRedisResponseCache({ redis: client, commandTimeoutMs: HANG_GUARD_MS });
    await server.kill();
    await waitFor(() => client.status !== 'ready', { what: 'the client to notice the crash' });
    await expect(cache.get('tessera:cache:test:a')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/not connected|failed/),
    });
    await expect(cache.set('tessera:cache:test:a', entry([1]), 5)).rejects.toMatchObject({ code: 'UNAVAILABLE' });

    await server.restart();
    await waitFor(() => client.status === 'ready' && admin.status === 'ready', { what: 'the clients to reconnect' });
    await cache.set('tessera:cache:test:back', entry([9]), 5);
    expect((await cache.get('tessera:cache:test:back'))?.body).toEqual(new Uint8Array([9]));
  });

  it('behind the cache layer: Redis killed → BYPASS and still served; Redis back → MISS then HIT', async () => {
    const cache = createRedisResponseCache({ redis: client, commandTimeoutMs: HANG_GUARD_MS });
    const layer = createCacheLayer({ store: cache, logger: silentLogger, outageProbeIntervalMs: 0 });
    const labels = { tenant: 't', model: 'm', version: '1' };
    const policy = { ttlSeconds: 30, directive: 'default' as const };
    let calls = 0;
    const produce = async () => ({ body: new Uint8Array([calls++]), headers: {}, computeUs: 10 });

    await server.kill();
    await waitFor(() => client.status !== 'ready', { what: 'the client to notice the crash' });
    const during = await layer.run('tessera:cache:test:layer', policy, labels, produce);
    expect(during.status).toBe('BYPASS');
    expect(layer.storeInOutage).toBe(true);

    await server.restart();
    await waitFor(() => client.status === 'ready', { what: 'the client to reconnect' });
    expect((await layer.run('tessera:cache:test:layer', policy, labels, produce)).status).toBe('MISS');
    const hit = await layer.run('tessera:cache:test:layer', policy, labels, produce);
    expect([hit.status, Array.from(hit.body), calls]).toEqual(['HIT', [1], 2]);
    expect(layer.storeInOutage).toBe(false);
  });

  it('refuses a non-positive command timeout', () => {
    expect(() => createRedisResponseCache({ redis: client, commandTimeoutMs: 0 })).toThrow(/commandTimeoutMs/);
  });
});
