/**
 * Attack 7 (issue 14): twenty free tenants, each within its own limits, flood a node until their
 * requests time out in the gateway's own admission queue. Those deadlines are the gateway's, not the
 * node's: they must not open the node's circuit breaker, so premium traffic that follows is served
 * (200), never refused with a 503 because of a breaker the free tier opened. Real redis-server, a
 * real node process (`sleepy`: holds each request as long as asked) and a real gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { sleepyBody } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const FREE_TENANTS = 20;
const PREMIUM_KEY = 'tsk_sec-breaker-premium';
const freeKey = (i: number): string => `tsk_sec-breaker-free-${i}`;

describe('breakers judge nodes only (redis + sleepy node + gateway)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;

  const infer = (key: string, ms: number) =>
    fetch(`${gateway.url}/v2/models/sleepy/infer`, { method: 'POST', body: sleepyBody(ms), headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-breaker-node', '--advertise-host', '127.0.0.1']);
    const tenants = [
      { id: 'premium', tier: 'premium', keys: [{ id: 'p1', hash: await sha256Hex(PREMIUM_KEY) }] },
      ...(await Promise.all(
        Array.from({ length: FREE_TENANTS }, async (_, i) => ({ id: `free-${i}`, tier: 'free', keys: [{ id: `f${i}`, hash: await sha256Hex(freeKey(i)) }] })),
      )),
    ];
    // The default free tier (500 ms in the gateway's queue); a cache would only hide the flood.
    const config = loadGatewayConfig(JSON.stringify({ tenants, cache: { enabled: false } }));
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('free requests expiring in the gateway queue never open the node’s breaker; premium is served afterwards', async () => {
    const statuses = new Map<number, number>();
    // Two rounds of every free tenant sending 5 requests of 400 ms at once (within its 5/s, burst 10):
    // far more work than the node clears in the free tier's 500 ms, so most expire in the queue or
    // reach the node with a sliver of their deadline left.
    for (let round = 0; round < 2; round++) {
      const flood = Array.from({ length: FREE_TENANTS * 5 }, (_, i) => infer(freeKey(i % FREE_TENANTS), 400));
      for (const res of await Promise.all(flood)) {
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        await res.arrayBuffer();
      }
    }
    // The flood really did time out (503 from admission, 504 for deadlines), and none was a rate limit.
    const expired = (statuses.get(503) ?? 0) + (statuses.get(504) ?? 0);
    expect(expired, JSON.stringify([...statuses])).toBeGreaterThan(FREE_TENANTS * 5);
    expect(statuses.get(429) ?? 0).toBe(0);

    const metrics = (await gateway.metrics.render()).body;
    expect(metrics).not.toMatch(/tessera_gateway_breaker_state\{node="sec-breaker-node"\} [12]/);
    // Premium, right after: served by the node, not refused by an open breaker.
    const premium = await Promise.all(Array.from({ length: 5 }, () => infer(PREMIUM_KEY, 10)));
    for (const res of premium) expect(res.status, await res.text()).toBe(200);
  });
});
