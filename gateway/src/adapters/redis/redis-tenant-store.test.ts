import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../../shared/test/support/index.js';
import { seedTenants, sha256Hex } from '../../core/auth/index.js';
import { createRedisTenantStore } from './redis-tenant-store.js';

describe('Redis tenant store', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    redis.on('error', () => {});
    await redis.connect();
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  /** `redis` with its key lookups (evalsha) counted and, while `hold` is set, held back until released. */
  function countingRedis(): { client: Redis; lookups: () => number; hold: () => () => void } {
    let lookups = 0;
    let gate: Promise<void> | undefined;
    const client = new Proxy(redis, {
      get(target, prop) {
        if (prop === 'evalsha') {
          return async (...args: Parameters<Redis['evalsha']>) => {
            lookups++;
            const reply = await target.evalsha(...args);
            await gate;
            return reply;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const hold = (): (() => void) => {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    };
    return { client, lookups: () => lookups, hold };
  }

  it('finds tenants by key hash, forgets revoked keys, and keeps revocations across re-seeding', async () => {
    const store = createRedisTenantStore({ redis, logger: silentLogger, freshMs: 0 });
    const hash = await sha256Hex('k-acme');
    const seed = [{ id: 'acme', name: 'Acme', tier: 'premium', keys: [{ id: 'acme-1', hash }] }];
    await seedTenants(store, seed, 1);
    const found = await store.findByKeyHash(hash);
    expect(found?.tenant).toMatchObject({ id: 'acme', tier: 'premium' });
    expect(found?.key).toMatchObject({ id: 'acme-1', revoked: false });
    expect(await store.findByKeyHash(await sha256Hex('other'))).toBeUndefined();

    expect(await store.revokeKey('acme-1')).toBe(true);
    expect(await store.revokeKey('acme-1')).toBe(false);
    expect(await store.findByKeyHash(hash)).toBeUndefined();
    await seedTenants(store, seed, 2);
    expect(await store.findByKeyHash(hash)).toBeUndefined();
    expect((await store.listKeys('acme')).map((k) => k.revoked)).toEqual([true]);

    await store.deleteTenant('acme');
    expect(await store.getTenant('acme')).toBeUndefined();
    expect(await store.listKeys('acme')).toEqual([]);
  });

  it('drops other gateways\' cached lookups at once on revocation and tenant changes (pub/sub)', async () => {
    const subscriber = redis.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    try {
      // Gateway A makes the changes; gateway B trusts its cache for a minute, so only the message can tell it.
      const a = createRedisTenantStore({ redis, logger: silentLogger, prefix: 'pubsub:', freshMs: 60_000 });
      const b = createRedisTenantStore({ redis, logger: silentLogger, prefix: 'pubsub:', freshMs: 60_000, subscriber });
      const hash = await sha256Hex('k-gamma');
      const other = await sha256Hex('k-gamma-2');
      await seedTenants(a, [{ id: 'gamma', name: 'Gamma', tier: 'free', keys: [{ id: 'gamma-1', hash }, { id: 'gamma-2', hash: other }] }], 1);
      await waitFor(async () => (await b.findByKeyHash(hash)) !== undefined && (await b.findByKeyHash(other)) !== undefined, {
        what: 'B caches both keys',
      });

      await a.putTenant({ id: 'gamma', name: 'Gamma', tier: 'free', disabled: true });
      await waitFor(async () => (await b.findByKeyHash(hash))?.tenant.disabled === true, { what: 'B sees the tenant disabled', timeoutMs: 2000 });
      expect((await b.findByKeyHash(other))?.tenant.disabled).toBe(true);

      // Removed behind the stores' back: B can only still know this key from its cache.
      await redis.hdel('pubsub:{tenants}:key-hashes', other);
      expect(await a.revokeKey('gamma-1')).toBe(true);
      await waitFor(async () => (await b.findByKeyHash(hash)) === undefined, { what: 'B forgets the revoked key', timeoutMs: 2000 });
      // Only that key was dropped: the other one is still served from B's cache.
      expect((await b.findByKeyHash(other))?.key.id).toBe('gamma-2');
    } finally {
      subscriber.disconnect();
    }
  });

  it('does not cache a lookup that an invalidation overtook', async () => {
    const subscriber = Object.assign(new EventEmitter(), { subscribe: async () => 1 }) as unknown as Redis;
    // The lookup's reply is held back until after the invalidation message arrived.
    const { client: slow, lookups, hold } = countingRedis();
    const hash = await sha256Hex('k-delta');
    await seedTenants(createRedisTenantStore({ redis, logger: silentLogger, prefix: 'race:' }), [
      { id: 'delta', name: 'Delta', tier: 'free', keys: [{ id: 'delta-1', hash }] },
    ], 1);
    const store = createRedisTenantStore({ redis: slow, logger: silentLogger, prefix: 'race:', freshMs: 60_000, subscriber });
    const release = hold();
    const pending = store.findByKeyHash(hash);
    await new Promise((resolve) => setTimeout(resolve, 20));
    subscriber.emit('message', 'race:{tenants}:changed', `key-hash:${hash}`);
    release();
    expect((await pending)?.tenant.id).toBe('delta');
    await store.findByKeyHash(hash);
    expect(lookups()).toBe(2);
    await store.findByKeyHash(hash);
    expect(lookups()).toBe(2);
  });

  it('asks Redis again after its subscriber reconnects, yet still serves those keys while the lookup connection is not back', async () => {
    const subscriber = Object.assign(new EventEmitter(), { subscribe: async () => 1 }) as unknown as Redis;
    let lookups = 0;
    let lookupsFail = false;
    const flaky = new Proxy(redis, {
      get(target, prop) {
        if (prop === 'evalsha') {
          return async (...args: Parameters<Redis['evalsha']>) => {
            lookups++;
            if (lookupsFail) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
            return target.evalsha(...args);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const hash = await sha256Hex('k-epsilon');
    // Another gateway's store (no subscriber here: its changes reach ours only through Redis).
    const other = createRedisTenantStore({ redis, logger: silentLogger, prefix: 'rec:' });
    await seedTenants(other, [{ id: 'epsilon', name: 'Epsilon', tier: 'free', keys: [{ id: 'epsilon-1', hash }] }], 1);
    const store = createRedisTenantStore({ redis: flaky, logger: silentLogger, prefix: 'rec:', freshMs: 60_000, subscriber });
    expect((await store.findByKeyHash(hash))?.tenant.id).toBe('epsilon');
    expect((await store.findByKeyHash(hash))?.tenant.id).toBe('epsilon');
    expect(lookups).toBe(1);
    // The subscriber is back first; the lookup connection is still reconnecting.
    lookupsFail = true;
    subscriber.emit('ready');
    expect((await store.findByKeyHash(hash))?.tenant.id).toBe('epsilon');
    expect(lookups, 'the entry was expired: Redis was asked').toBe(2);
    await expect(store.findByKeyHash(await sha256Hex('never-seen'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    // Once lookups work again, the expired entry is checked against Redis: a revocation made while
    // the subscriber was away is seen at once, not after freshMs.
    lookupsFail = false;
    await other.revokeKey('epsilon-1');
    expect(await store.findByKeyHash(hash)).toBeUndefined();
    expect(lookups).toBe(4);
  });

  it('asks Redis once for a burst of lookups of one key, but never lets a lookup asked before a revocation answer one after it', async () => {
    const { client, lookups, hold } = countingRedis();
    const hash = await sha256Hex('k-zeta');
    const store = createRedisTenantStore({ redis: client, logger: silentLogger, prefix: 'burst:', freshMs: 60_000 });
    await seedTenants(store, [{ id: 'zeta', name: 'Zeta', tier: 'free', keys: [{ id: 'zeta-1', hash }] }], 1);
    const release = hold();
    const burst = Array.from({ length: 16 }, () => store.findByKeyHash(hash));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Revoked through this gateway while the burst's lookup is out: a request after it must not join it.
    expect(await store.revokeKey('zeta-1')).toBe(true);
    const after = store.findByKeyHash(hash);
    release();
    expect((await Promise.all(burst)).map((found) => found?.tenant.id)).toEqual(Array(16).fill('zeta'));
    expect(await after).toBeUndefined();
    expect(lookups()).toBe(2);
  });

  it('checks a key in steady use against Redis again before its entry runs out, off the request path', async () => {
    const { client, lookups, hold } = countingRedis();
    let now = 0;
    const hash = await sha256Hex('k-eta');
    // Another gateway's store without pub/sub: its revocation reaches ours only through Redis.
    const other = createRedisTenantStore({ redis, logger: silentLogger, prefix: 'ahead:' });
    await seedTenants(other, [{ id: 'eta', name: 'Eta', tier: 'free', keys: [{ id: 'eta-1', hash }] }], 1);
    const store = createRedisTenantStore({ redis: client, logger: silentLogger, prefix: 'ahead:', freshMs: 1000, now: () => now });
    expect((await store.findByKeyHash(hash))?.key.id).toBe('eta-1');
    now = 400;
    expect((await store.findByKeyHash(hash))?.key.id).toBe('eta-1');
    expect(lookups(), 'young entry: no Redis call').toBe(1);
    await other.revokeKey('eta-1');
    now = 600;
    const release = hold();
    // Past half its life: answered from memory at once although the refresh is held back.
    expect((await store.findByKeyHash(hash))?.key.id).toBe('eta-1');
    expect(lookups()).toBe(2);
    release();
    // Still within the first answer's 1000 ms: refused all the same, because the refresh saw the revocation.
    await waitFor(async () => (await store.findByKeyHash(hash)) === undefined, { what: 'the refresh saw the revocation', timeoutMs: 2000 });
  });

  it('keeps known keys working while Redis is down, and says UNAVAILABLE for the others', async () => {
    let now = 0;
    const store = createRedisTenantStore({ redis, logger: silentLogger, freshMs: 10, staleIfErrorMs: 1000, now: () => now });
    const hash = await sha256Hex('k-beta');
    await store.putTenant({ id: 'beta', name: 'Beta', tier: 'free' });
    await store.putKey({ id: 'beta-1', tenantId: 'beta', hash, createdAt: 0, revoked: false });
    expect((await store.findByKeyHash(hash))?.tenant.id).toBe('beta');
    await server.kill();
    now = 500;
    expect((await store.findByKeyHash(hash))?.tenant.id).toBe('beta');
    await expect(store.findByKeyHash(await sha256Hex('unknown'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    now = 2000;
    await expect(store.findByKeyHash(hash)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await server.restart();
  });
});
