import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, type RedisServer } from '../../../../shared/src/testing/index.js';
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
