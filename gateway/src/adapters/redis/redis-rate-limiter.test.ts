import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, type RedisServer } from '../../../../shared/src/testing/index.js';
import type { RateLimits } from '../../core/ports/index.js';
import { KEYS, simpleInferBody, testGateway } from '../../../test/app-fixtures.js';
import { countDeclaredKeys, luaScript } from './lua-scripts.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';
import { rateLimitKey } from './keys.js';

// Refill so slow (1 token per ~17 min) that no token comes back during a test: counts are exact.
const SLOW: RateLimits = { requestsPerSecond: 0.001, burst: 50, elementsPerSecond: 0, elementsBurst: 0 };

describe('Redis token bucket', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it('declares its keys in the script header', () => {
    expect(luaScript('token-bucket').numberOfKeys).toBe(1);
    expect(luaScript('find-key').numberOfKeys).toBe(3);
    expect(() => countDeclaredKeys('return 1', 'x')).toThrow(/no --\[\[ header/);
  });

  it('never over-grants under many concurrent takes from several clients', async () => {
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const c = new Redis(server.url, { lazyConnect: true });
        await c.connect();
        return c;
      }),
    );
    const limiters = clients.map((c) => createRedisRateLimiter({ redis: c, logger: silentLogger }));
    const decisions = await Promise.all(Array.from({ length: 400 }, (_, i) => limiters[i % 4]!.take('crowd', 0, SLOW)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused.every((d) => d.retryAfterMs > 0 && d.remaining === 0 && d.limit === 50)).toBe(true);
    for (const c of clients) c.disconnect();
  });

  it('takes requests and elements together or not at all', async () => {
    const limiter = createRedisRateLimiter({ redis, logger: silentLogger });
    const limits: RateLimits = { requestsPerSecond: 0.001, burst: 10, elementsPerSecond: 0.001, elementsBurst: 100 };
    expect((await limiter.take('elems', 60, limits)).allowed).toBe(true);
    const refused = await limiter.take('elems', 60, limits);
    expect(refused.allowed).toBe(false);
    // The refused take cost no request token: 9 left, then 8 after a small take.
    const small = await limiter.take('elems', 40, limits);
    expect(small).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('uses a Cluster-safe key per tenant that expires when idle', async () => {
    const limiter = createRedisRateLimiter({ redis, logger: silentLogger, prefix: 'x:' });
    await limiter.take('acme', 0, { requestsPerSecond: 100, burst: 10, elementsPerSecond: 0, elementsBurst: 0 });
    expect(rateLimitKey('x:', 'acme')).toBe('x:{tenant:acme}:ratelimit');
    const ttl = await redis.pttl('x:{tenant:acme}:ratelimit');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1010);
  });

  it('answers 429 with Retry-After and RateLimit headers through the app', async () => {
    const { gateway } = await testGateway({ rateLimiter: createRedisRateLimiter({ redis, logger: silentLogger }) });
    const call = () =>
      gateway.fetch(new Request('http://gw/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), headers: { 'x-api-key': KEYS.free } }));
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
  });

  it('fails open, with a warning and the store-error hook, when Redis is down', async () => {
    const dead = new Redis(`redis://127.0.0.1:${server.port}`, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const warnings: string[] = [];
    let errors = 0;
    const limiter = createRedisRateLimiter({
      redis: dead,
      logger: { ...silentLogger, warn: (m: string) => warnings.push(m) },
      onStoreError: () => errors++,
    });
    const decisions = await Promise.all([1, 2, 3].map(() => limiter.take('t', 0, SLOW)));
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(errors).toBe(3);
    expect(warnings).toHaveLength(1);
    dead.disconnect();
  });
});
