/**
 * A tenant that pauses to exploit held rate-limit leases (issue 20, renewals that follow use): a real
 * redis-server, two gateways' Redis rate limiters with their real renewal timers. A holding not spent
 * from is no longer renewed, so it keeps tokens Redis counted before the pause while the bucket refills;
 * what a tenant can get right after a pause must stay within its burst plus one lease per gateway
 * (token-leases.ts), plus what the bucket refills meanwhile, however it spreads its requests.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, type RedisServer } from '../../shared/test/support/index.js';
import { createRedisRateLimiter } from '../../gateway/src/adapters/redis/index.js';
import type { RateLimits } from '../../gateway/src/core/ports/index.js';

// 50 requests/s into a bucket of 20: 100 ms leases of 5 tokens, refilled from empty in 0.4 s.
const LIMITS: RateLimits = { requestsPerSecond: 50, burst: 20, elementsPerSecond: 0, elementsBurst: 0 };
const LEASE = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('rate-limit leases across a pause', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
    for (let i = 0; i < 2; i++) {
      const client = new Redis(server.url, { lazyConnect: true });
      await client.connect();
      clients.push(client);
    }
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server?.stop();
  });

  it('gives a tenant back from a pause no more than its burst plus one lease per gateway', async () => {
    const gateways = clients.map((redis) => createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 100, keepWarmMs: 5000 }));
    // Each gateway leases, spends from its lease and has it renewed: both hold a full lease, unused.
    for (const gateway of gateways) {
      for (let i = 0; i < 2; i++) expect((await gateway.take('pauser', 0, LIMITS)).allowed).toBe(true);
    }
    // Pause past the renewals and the bucket's refill (0.4 s), well within keepWarmMs: the holdings
    // stay, unused, while the bucket fills.
    await sleep(800);
    const started = Date.now();
    let allowed = 0;
    for (let wave = 0; wave < 10; wave++) {
      const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => gateways[i % 2]!.take('pauser', 0, LIMITS)));
      allowed += decisions.filter((d) => d.allowed).length;
    }
    const refilled = Math.ceil(((Date.now() - started) / 1000) * LIMITS.requestsPerSecond) + 1;
    expect(allowed).toBeGreaterThanOrEqual(LIMITS.burst);
    expect(allowed).toBeLessThanOrEqual(LIMITS.burst + 2 * LEASE + refilled);
  });
});
