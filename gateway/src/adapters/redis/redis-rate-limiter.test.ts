import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../../shared/test/support/index.js';
import type { RateLimitDecision, RateLimits } from '../../core/ports/index.js';
import { KEYS, simpleInferBody, testGateway } from '../../../test/app-fixtures.js';
import { countDeclaredKeys, luaScript } from './lua-scripts.js';
import { createRedisRateLimiter, takeBatch } from './redis-rate-limiter.js';
import { rateLimitKey } from '../../../../shared/src/fleet/index.js';

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
    expect(luaScript('cache-get').numberOfKeys).toBe(1);
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

  describe('batches', () => {
    // Refill so slow that the few ms between single calls add < 1e-6 tokens: token counts, decisions
    // and RateLimit-Reset do not depend on when each call ran. Burst / rate are whole seconds, and a
    // deficit of whole tokens waits whole seconds, so that Retry-After (s) is exact too; only
    // retryAfterMs shrinks, by the ms that passed between single calls, as it must.
    const RATE = 1e-6;
    const limits: RateLimits = { requestsPerSecond: RATE, burst: 5, elementsPerSecond: RATE, elementsBurst: 100 };
    const elements = [10, 60, 40, 30, 0, 5, 1, 20, 0, 0, 3, 2];
    const takes = elements.map((n) => ({ elements: n, limits }));

    async function bucket(key: string): Promise<{ r: number; e: number }> {
      const [r, e] = await redis.hmget(key, 'r', 'e');
      return { r: Number(r), e: Number(e) };
    }
    const retryAfterSeconds = (d: RateLimitDecision) => Math.max(1, Math.ceil(d.retryAfterMs / 1000));
    const exact = (d: RateLimitDecision) => ({ allowed: d.allowed, remaining: d.remaining, limit: d.limit, resetSeconds: d.resetSeconds, retryAfter: retryAfterSeconds(d) });

    async function compare(prepare: (key: string) => Promise<void>): Promise<void> {
      const [singleKey, batchKey] = [`cmp:${Math.random()}:single`, `cmp:${Math.random()}:batch`];
      // The spread counts from before the first prepare: a prepared bucket carries the time it was
      // written, and under load the two prepares can be many ms apart.
      const started = Date.now();
      await prepare(singleKey);
      await prepare(batchKey);
      const singles: RateLimitDecision[] = [];
      for (const take of takes) singles.push(...(await takeBatch(redis, singleKey, [take])));
      const batch = await takeBatch(redis, batchKey, takes);
      const spreadMs = Date.now() - started + 1;

      expect(batch.map(exact)).toEqual(singles.map(exact));
      batch.forEach((d, i) => expect(Math.abs(d.retryAfterMs - singles[i]!.retryAfterMs)).toBeLessThanOrEqual(spreadMs));
      // Both kinds of refusal happen, and allowed requests after refused ones: the order matters.
      expect(batch.map((d) => d.allowed)).toContain(false);
      expect(batch.slice(batch.findIndex((d) => !d.allowed)).some((d) => d.allowed)).toBe(true);
      const [a, b] = [await bucket(singleKey), await bucket(batchKey)];
      expect(b.r).toBeCloseTo(a.r, 6);
      expect(b.e).toBeCloseTo(a.e, 6);
      const [ttlA, ttlB] = [await redis.pttl(singleKey), await redis.pttl(batchKey)];
      expect(Math.abs(ttlA - ttlB)).toBeLessThanOrEqual(spreadMs + 50);
    }

    it('decides N requests in one call exactly as N single calls, from empty buckets', async () => {
      await compare(async () => {});
    });

    it('decides N requests in one call exactly as N single calls, from partly drained buckets', async () => {
      await compare(async (key) => {
        const [seconds, micros] = await redis.time();
        await redis.hset(key, 'r', '2', 'e', '45', 't', String(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)));
        // As a loaded machine would: time passes between the two buckets' preparation.
        await new Promise((resolve) => setTimeout(resolve, 30));
      });
    });

    it("sends one tenant's concurrent requests in batches, deciding them in arrival order", async () => {
      const limiter = createRedisRateLimiter({ redis, logger: silentLogger });
      await redis.script('LOAD', luaScript('token-bucket').source);
      await redis.config('RESETSTAT');
      // The first goes at the end of this event-loop turn, alone; the 59 that come while it is in flight
      // go together in the next call.
      const first = limiter.take('arrivals', 0, SLOW);
      await new Promise<void>((r) => setImmediate(r));
      const decisions = await Promise.all([first, ...Array.from({ length: 59 }, () => limiter.take('arrivals', 0, SLOW))]);
      const stats = await redis.info('commandstats');
      expect(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1]).toBe('2');
      expect(decisions.map((d) => d.remaining)).toEqual([...Array.from({ length: 50 }, (_, i) => 49 - i), ...Array<number>(10).fill(0)]);
      expect(decisions.map((d) => d.allowed)).toEqual([...Array<boolean>(50).fill(true), ...Array<boolean>(10).fill(false)]);
      // Another tenant is not batched behind this one, and its bucket is its own.
      expect(await limiter.take('arrivals-other', 0, SLOW)).toMatchObject({ allowed: true, remaining: 49 });
    });

    it('fails open each request of a failed batched call, as a failed single call does', async () => {
      // The real client, except that the test decides when each script call answers and whether it fails.
      const gates: { release: (fail: boolean) => void }[] = [];
      const gated = new Proxy(redis, {
        get(target, name, receiver) {
          if (name !== 'evalsha') return Reflect.get(target, name, receiver) as unknown;
          return (...args: unknown[]) =>
            new Promise((resolve, reject) => {
              gates.push({
                release: (fail) => {
                  if (fail) reject(new Error('Connection is closed.'));
                  else (target.evalsha as (...a: unknown[]) => Promise<unknown>)(...args).then(resolve, reject);
                },
              });
            });
        },
      });
      const warnings: string[] = [];
      let errors = 0;
      const limiter = createRedisRateLimiter({
        redis: gated,
        logger: { ...silentLogger, warn: (m: string) => warnings.push(m) },
        onStoreError: () => errors++,
      });
      const strict: RateLimits = { requestsPerSecond: 0.001, burst: 1, elementsPerSecond: 0, elementsBurst: 0 };
      const first = limiter.take('gated', 0, strict);
      await waitFor(() => gates.length === 1, { what: 'the first call' });
      const batch = Array.from({ length: 9 }, () => limiter.take('gated', 0, strict));
      await new Promise<void>((r) => setImmediate(r));
      expect(gates).toHaveLength(1); // the 9 wait for the call in flight
      gates[0]!.release(false);
      expect(await first).toMatchObject({ allowed: true, remaining: 0 });
      await waitFor(() => gates.length === 2, { what: 'the batched call' });
      gates[1]!.release(true);
      // The bucket is empty, so had the call worked all 9 would be refused: fail open allows them all.
      const decisions = await Promise.all(batch);
      expect(decisions.every((d) => d.allowed && d.limit === 1 && d.remaining === 1)).toBe(true);
      expect([errors, warnings.length]).toEqual([9, 1]);
      // The next call works again, against the untouched bucket.
      const after = limiter.take('gated', 0, strict);
      await waitFor(() => gates.length === 3, { what: 'the next call' });
      gates[2]!.release(false);
      expect(await after).toMatchObject({ allowed: false, remaining: 0 });
      expect(errors).toBe(9);
    });
  });

  it('fails open, with a warning and the store-error hook, when Redis is down', async () => {
    const dead = new Redis(`redis://127.0.0.1:${server.port}`, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    dead.on('error', () => {});
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

  describe('leases (rateLimitLeaseMs)', () => {
    /** Script calls Redis has run so far (EVALSHA and EVAL), from INFO commandstats. */
    async function scriptCalls(): Promise<number> {
      const info = await redis.info('commandstats');
      let calls = 0;
      for (const match of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
      return calls;
    }
    // 1 token/s: under a second of test adds at most one; 10 s leases hold min(10, burst / 2) tokens.
    const STEADY: RateLimits = { requestsPerSecond: 1, burst: 50, elementsPerSecond: 0, elementsBurst: 0 };

    it('several leasing gateways together never allow more than the shared bucket grants', async () => {
      const clients = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const c = new Redis(server.url, { lazyConnect: true });
          await c.connect();
          return c;
        }),
      );
      const limiters = clients.map((c) => createRedisRateLimiter({ redis: c, logger: silentLogger, leaseMs: 10_000 }));
      const decisions: RateLimitDecision[] = [];
      // Waves of concurrent takes, so leases are taken, spent and taken again.
      for (let wave = 0; wave < 10; wave++) {
        decisions.push(...(await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 4]!.take('leased-crowd', 0, STEADY)))));
      }
      const allowed = decisions.filter((d) => d.allowed).length;
      expect(allowed).toBeGreaterThanOrEqual(50);
      expect(allowed).toBeLessThanOrEqual(51);
      for (const c of clients) c.disconnect();
    });

    it('decides a lone tenant locally between script calls, and reports the tokens it holds as remaining', async () => {
      const limits: RateLimits = { requestsPerSecond: 1000, burst: 1000, elementsPerSecond: 0, elementsBurst: 0 };
      const leasing = createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 1000 });
      const before = await scriptCalls();
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 200; i++) decisions.push(await leasing.take('lone-leased', 0, limits));
      const leasedCalls = (await scriptCalls()) - before;
      expect(decisions.every((d) => d.allowed)).toBe(true);
      // One call leases 500 (half the burst): the 200 takes need one, or two if the first raced a refill.
      expect(leasedCalls).toBeLessThanOrEqual(2);
      expect(decisions[199]!.remaining).toBeGreaterThanOrEqual(800);
      expect(decisions[199]!.remaining).toBeLessThanOrEqual(decisions[1]!.remaining);

      const exact = createRedisRateLimiter({ redis, logger: silentLogger });
      const start = await scriptCalls();
      for (let i = 0; i < 20; i++) await exact.take('lone-exact', 0, limits);
      expect((await scriptCalls()) - start).toBe(20);
    });

    it('lets a lease expire when it is not kept warm: after leaseMs the next request is decided in Redis again', async () => {
      let now = 1_000_000;
      const limits: RateLimits = { requestsPerSecond: 100, burst: 100, elementsPerSecond: 0, elementsBurst: 0 };
      const limiter = createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 100, keepWarmMs: 0, now: () => now });
      const start = await scriptCalls();
      await limiter.take('expiring', 0, limits);
      await limiter.take('expiring', 0, limits);
      expect((await scriptCalls()) - start).toBe(1);
      now += 100;
      await limiter.take('expiring', 0, limits);
      expect((await scriptCalls()) - start).toBe(2);
    });

    describe('renewal ahead of time', () => {
      /** A limiter on a clock the test moves, with its renewal tick in the test's hands. */
      function steered(keepWarmMs: number, client: Redis = redis) {
        const clock = { now: 5_000_000 };
        let tick = (): void => undefined;
        /** Whether the limiter wants its renewal timer running. */
        const timer = { running: false, starts: 0 };
        const limiter = createRedisRateLimiter({
          redis: client,
          logger: silentLogger,
          leaseMs: 100,
          keepWarmMs,
          now: () => clock.now,
          renewalTicks: (run) => {
            tick = run;
            // A start while stopped is one setInterval made by the default ticks.
            const start = (): void => {
              if (!timer.running) timer.starts += 1;
              timer.running = true;
            };
            return { start, stop: () => void (timer.running = false) };
          },
        });
        return { limiter, clock, client, timer, tick: () => tick() };
      }

      /** Runs the tick and waits until what it sent has been answered (one connection answers in order). */
      async function tickAndSettle(steering: ReturnType<typeof steered>): Promise<void> {
        steering.tick();
        await new Promise((resolve) => setImmediate(resolve));
        await steering.client.ping();
        await new Promise((resolve) => setImmediate(resolve));
      }

      /** Moves the clock by `ms` in quarter-lease steps, with a tick at each. */
      async function idle(steering: ReturnType<typeof steered>, ms: number): Promise<void> {
        for (let t = 0; t < ms; t += 25) {
          steering.clock.now += 25;
          await tickAndSettle(steering);
        }
      }

      async function redisPid(): Promise<number> {
        return Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
      }

      /** Whether `take` settles before Redis could answer anything (Redis is stopped). */
      async function settlesWithoutRedis(limiter: ReturnType<typeof createRedisRateLimiter>, key: string, limits: RateLimits): Promise<{ settled: boolean; done: Promise<unknown> }> {
        let settled = false;
        const done = limiter.take(key, 0, limits).then((decision) => {
          settled = true;
          return decision;
        });
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { settled, done };
      }

      it('decides the first request after an idle spell locally: it does not wait for Redis (paused with SIGSTOP)', async () => {
        const limits: RateLimits = { requestsPerSecond: 1000, burst: 1000, elementsPerSecond: 0, elementsBurst: 0 };
        const warm = steered(60_000);
        const cold = steered(0);
        expect((await warm.limiter.take('idle-warm', 0, limits)).allowed).toBe(true);
        expect((await cold.limiter.take('idle-cold', 0, limits)).allowed).toBe(true);
        // Ten leases long with no request: the warm holding is renewed, the cold one expires.
        await idle(warm, 1000);
        cold.clock.now += 1000;
        const pid = await redisPid();
        process.kill(pid, 'SIGSTOP');
        let warmTake: { settled: boolean; done: Promise<unknown> };
        let coldTake: { settled: boolean; done: Promise<unknown> };
        try {
          warmTake = await settlesWithoutRedis(warm.limiter, 'idle-warm', limits);
          coldTake = await settlesWithoutRedis(cold.limiter, 'idle-cold', limits);
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        expect(warmTake.settled).toBe(true);
        expect(await warmTake.done).toMatchObject({ allowed: true });
        // Without renewal the same request waits for Redis (and is answered once it runs again).
        expect(coldTake.settled).toBe(false);
        expect(await coldTake.done).toMatchObject({ allowed: true });
      });

      it('costs an idle tenant no script call and no timer, and a slow one about a call per request', async () => {
        const limits: RateLimits = { requestsPerSecond: 1000, burst: 1000, elementsPerSecond: 0, elementsBurst: 0 };
        const warm = steered(60_000);
        await warm.limiter.take('idle-cheap', 0, limits);
        const start = await scriptCalls();
        // Ten leases with no request: nothing renewed, and the limiter lets its timer stop.
        await idle(warm, 1000);
        expect((await scriptCalls()) - start).toBe(0);
        expect(warm.timer.running).toBe(false);
        // A request every 200 ms (two leases apart): each decided locally, each followed by one renewal.
        for (let i = 0; i < 10; i++) {
          expect(await warm.limiter.take('idle-cheap', 0, limits)).toMatchObject({ allowed: true });
          expect(warm.timer.running).toBe(true);
          await idle(warm, 200);
        }
        expect((await scriptCalls()) - start).toBe(10);
        expect(warm.timer.running).toBe(false);
      });

      it('keeps one renewal timer while a tenant is busy: renewals do not stop and restart it', async () => {
        // A stream's completion charges: one take every quarter lease for 40 leases, each lease renewed once or twice.
        const limits: RateLimits = { requestsPerSecond: 0, burst: 0, elementsPerSecond: 1_000_000, elementsBurst: 1_000_000 };
        const busy = steered(60_000);
        await busy.limiter.take('busy-charges', 16, limits);
        const start = await scriptCalls();
        for (let i = 0; i < 160; i++) {
          expect(await busy.limiter.take('busy-charges', 16, limits)).toMatchObject({ allowed: true });
          busy.clock.now += 25;
          await tickAndSettle(busy);
        }
        // Renewals happened (the holding was kept warm) ...
        expect((await scriptCalls()) - start).toBeGreaterThanOrEqual(40);
        // ... under the one timer the first take started (before: one start after each renewal, ~80).
        expect(busy.timer.starts).toBe(1);
        // Idle again: the first tick that finds nothing spent stops it.
        await idle(busy, 100);
        expect(busy.timer.running).toBe(false);
      });

      it('keeps the bucket exact with renewals: two gateways never allow more than it grants', async () => {
        // 20 tokens/s into a bucket of 40: 100 ms leases of 2 tokens, renewed between bursts of takes.
        const limits: RateLimits = { requestsPerSecond: 20, burst: 40, elementsPerSecond: 0, elementsBurst: 0 };
        const other = new Redis(server.url, { lazyConnect: true });
        await other.connect();
        const gateways = [steered(60_000), steered(60_000, other)];
        const started = Date.now();
        let allowed = 0;
        for (let round = 0; round < 12; round++) {
          const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => gateways[i % 2]!.limiter.take('renewed-crowd', 0, limits)));
          allowed += decisions.filter((d) => d.allowed).length;
          for (const g of gateways) {
            g.clock.now += 60;
            await tickAndSettle(g);
          }
        }
        const refilled = Math.ceil(((Date.now() - started) / 1000) * limits.requestsPerSecond);
        // Every token allowed was counted in Redis: given-back tokens return to the bucket, never twice.
        expect(allowed).toBeGreaterThanOrEqual(40);
        expect(allowed).toBeLessThanOrEqual(40 + refilled);
        other.disconnect();
      });
    });

    it('does not lease a tier whose lease would be under two tokens: each request is decided in Redis', async () => {
      const limiter = createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 100 });
      const start = await scriptCalls();
      for (let i = 0; i < 3; i++) await limiter.take('slow-tier', 0, { requestsPerSecond: 10, burst: 20, elementsPerSecond: 0, elementsBurst: 0 });
      expect((await scriptCalls()) - start).toBe(3);
    });
  });
});
