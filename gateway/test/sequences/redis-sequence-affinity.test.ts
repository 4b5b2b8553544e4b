/** The Redis SequenceAffinity against a real redis-server: key layout, TTL refresh, namespacing. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequenceAffinityKey } from '../../../shared/src/fleet/index.js';
import { startRedisServer, type RedisServer } from '../../../shared/test/support/index.js';
import { createMemorySequenceAffinity } from '../../src/adapters/memory/index.js';
import { createRedisSequenceAffinity } from '../../src/adapters/redis/index.js';
import type { SequenceRef } from '../../src/core/ports/index.js';

describe('Redis sequence affinity', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  const ref = (tenantId: string, sequenceId: string, model = 'vad'): SequenceRef => ({ tenantId, model, sequenceId });

  it('keeps the binding under the documented key, in the tenant slot, with the TTL; GETEX refreshes it', async () => {
    const store = createRedisSequenceAffinity({ redis, prefix: 'test:' });
    await store.set(ref('acme', 'u:5'), { nodeId: 'node-a', version: '1' }, 5_000);
    const key = 'test:{tenant:acme}:seq:vad:u:5';
    expect(sequenceAffinityKey('test:', 'acme', 'vad', 'u:5')).toBe(key);
    expect(await redis.pttl(key)).toBeGreaterThan(4_000);
    expect(await store.get(ref('acme', 'u:5'))).toEqual({ nodeId: 'node-a', version: '1' });
    expect(await store.get(ref('acme', 'u:5'), 60_000)).toEqual({ nodeId: 'node-a', version: '1' });
    expect(await redis.pttl(key)).toBeGreaterThan(50_000);
    await store.delete(ref('acme', 'u:5'));
    expect(await redis.exists(key)).toBe(0);
    expect(await store.get(ref('acme', 'u:5'), 1000)).toBeUndefined();
  });

  it('namespaces by tenant, model and id kind; encodes names so no two sequences share a key', async () => {
    const store = createRedisSequenceAffinity({ redis });
    await store.set(ref('a', 'u:5'), { nodeId: 'n1' }, 10_000);
    expect(await store.get(ref('b', 'u:5'))).toBeUndefined();
    expect(await store.get(ref('a', 's:5'))).toBeUndefined();
    expect(await store.get(ref('a', 'u:5', 'other'))).toBeUndefined();
    expect(sequenceAffinityKey('p:', 't', 'm:x', 's:y')).not.toBe(sequenceAffinityKey('p:', 't', 'm', 's:x:y'));
    expect(sequenceAffinityKey('p:', 't', 'm', 's:a b')).toBe('p:{tenant:t}:seq:m:s:a%20b');
  });

  it('treats a value that is not a binding as none', async () => {
    const store = createRedisSequenceAffinity({ redis });
    await redis.set(sequenceAffinityKey('tessera:', 'x', 'vad', 'u:1'), 'garbage');
    expect(await store.get(ref('x', 'u:1'))).toBeUndefined();
  });
});

describe('memory sequence affinity', () => {
  it('expires, refreshes and sweeps by its clock', async () => {
    let now = 0;
    const store = createMemorySequenceAffinity({ now: () => now, sweepEvery: 3 });
    await store.set(ref2('1'), { nodeId: 'n' }, 100);
    now = 90;
    expect(await store.get(ref2('1'), 100)).toEqual({ nodeId: 'n' });
    now = 189;
    expect(await store.get(ref2('1'))).toEqual({ nodeId: 'n' });
    now = 190;
    expect(await store.get(ref2('1'))).toBeUndefined();
    await store.set(ref2('2'), { nodeId: 'n' }, 10);
    now = 500;
    await store.set(ref2('3'), { nodeId: 'n' }, 10); // third write: the sweep drops the expired '2'
    expect(store.size).toBe(1);
  });
});

function ref2(id: string): SequenceRef {
  return { tenantId: 't', model: 'm', sequenceId: `u:${id}` };
}
