/**
 * Faults and isolation on the real stack: a redis-server, three node processes publishing load reports
 * (`bin/tessera-node.js`) and the gateway (startGateway, the code SIGTERM and the CLI use) on loopback.
 * The tests run in order and each leaves the fleet smaller: node-a is killed (its breaker must open
 * although its rolling window holds earlier successes), node-c is drained, node-b serves to the end; Redis is restarted last (it loses the config's tenants, a reported bug). What each proves is in its name; the README's "Reliability" section and
 * docs/reliability.md list them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { createRedisTenantStore } from '../../gateway/src/adapters/redis/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { loadGatewayConfig, type GatewayConfig } from '../../gateway/src/config/index.js';
import { seedTenants, sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { capturingLogger, metricValue, simpleBody, sleepyBody, type CapturingLogger } from './support/stack.js';
import { withinMs } from './support/timing.js';

const KEY = { a: 'tsk_rel-tenant-a-secret', b: 'tsk_rel-tenant-b-secret', limited: 'tsk_rel-limited-secret', admin: 'rel-admin-secret' };

describe('fleet faults (redis + three nodes + gateway)', () => {
  let redis: RedisServer;
  const nodes = new Map<string, NodeProcess>();
  let gateway: RunningGateway;
  let log: CapturingLogger;
  let config: GatewayConfig;
  let offset = 0;

  const infer = (key: string, body: string, headers: Record<string, string> = {}, model = 'simple') =>
    fetch(`${gateway.url}/v2/models/${model}/infer`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, ...headers } });
  // /metrics is behind the admin key by default (issue 14).
  const metrics = async () => (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY.admin}` } })).text();

  beforeAll(async () => {
    redis = await startRedisServer();
    const started = await Promise.all(
      ['node-a', 'node-b', 'node-c'].map((id) =>
        // node-c gets a long exit timeout so its drain can be watched from outside.
        startNodeProcess(['--redis-url', redis.url, '--node-id', id, '--advertise-host', '127.0.0.1', ...(id === 'node-c' ? ['--exit-timeout-secs', '20'] : [])]),
      ),
    );
    started.forEach((n, i) => nodes.set(['node-a', 'node-b', 'node-c'][i]!, n));
    config = loadGatewayConfig(
      JSON.stringify({
        tiers: {
          standard: { queueTimeoutMs: 8000 },
          limited: { priority: 3, queueTimeoutMs: 8000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
            rateLimits: { requestsPerSecond: 0.001, burst: 3, elementsPerSecond: 0, elementsBurst: 0 } },
        },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
          { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEY.b) }] },
          { id: 'tl', tier: 'limited', keys: [{ id: 'tl1', hash: await sha256Hex(KEY.limited) }] },
        ],
        cache: { models: { simple: { enabled: true } } },
      }),
    );
    log = capturingLogger();
    gateway = await startGateway({ config, redisUrl: redis.url, adminKey: KEY.admin, port: 0, host: '127.0.0.1', logger: log.logger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 3, { what: 'three nodes in the fleet view', timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await Promise.all([...nodes.values()].map((n) => n.stop()));
    await redis?.stop();
  });

  it('isolation: tenant B never gets tenant A’s cached or in-flight (coalesced) response, even for the same body at the same moment', async () => {
    for (let round = 0; round < 5; round++) {
      const body = (id: string) => simpleBody(10_000 + round, id);
      const [a, b] = await Promise.all([infer(KEY.a, body(`a-${round}`)), infer(KEY.b, body(`b-${round}`))]);
      expect([a.status, b.status]).toEqual([200, 200]);
      // Same body, same moment: two tenants, two upstream computations (no cross-tenant single-flight).
      expect([a.headers.get('x-cache'), b.headers.get('x-cache')]).toEqual(['MISS', 'MISS']);
      expect(((await a.json()) as { id: string }).id).toBe(`a-${round}`);
      expect(((await b.json()) as { id: string }).id).toBe(`b-${round}`);
      // Each tenant then hits its own entry, with its own request id.
      const bAgain = await infer(KEY.b, body(`b2-${round}`));
      expect(bAgain.headers.get('x-cache')).toBe('HIT');
      expect(((await bAgain.json()) as { id: string }).id).toBe(`b2-${round}`);
    }
  });

  it('node SIGKILL mid-request: clean errors (no hang past its deadline), node-a leaves the pick set, no in-flight counter leaks', async () => {
    const a = nodes.get('node-a')!;
    const deadlineMs = 6000;
    const headers = { 'x-tessera-deadline-ms': String(deadlineMs), 'cache-control': 'no-store' };
    const results: { status: number; error?: string }[] = [];
    const send = (body: string, model: string) =>
      // The deadline plus generous slack for a loaded 2-core CI box: this catches hangs, it is no latency test.
      withinMs(infer(KEY.a, body, headers, model), deadlineMs + 10_000, 'an answer near the deadline').then(async (r) => {
        const text = await r.text();
        results.push({ status: r.status, ...(r.status === 200 ? {} : { error: (JSON.parse(text) as { error: string }).error }) });
      });
    // Sleepy requests are held at the nodes, so at least five are in flight at node-a when it dies: its
    // breaker opens on five failures in a row, and with fewer it could leave the pick set by its stale
    // report alone (seen once on a loaded CI box with twelve sleepy requests over three nodes).
    const sleepy = Array.from({ length: 18 }, () => send(sleepyBody(1500), 'sleepy'));
    await waitFor(() => (gateway.directory.all().find((n) => n.id === 'node-a')?.localInflight ?? 0) >= 5 || undefined, {
      what: 'five requests in flight at node-a',
    });
    const load = [...sleepy, ...Array.from({ length: 20 }, (_, i) => send(simpleBody(70_000 + i), 'simple'))];
    a.process.kill('SIGKILL');
    // More traffic while node-a's report is still in Redis.
    const after = Array.from({ length: 20 }, (_, i) => send(simpleBody(80_000 + i), 'simple'));
    await Promise.all([...load, ...after]);

    expect(results).toHaveLength(58);
    for (const r of results) {
      expect([200, 503, 504], JSON.stringify(r)).toContain(r.status);
      if (r.status !== 200) expect(r.error).toEqual(expect.any(String));
    }
    expect(results.filter((r) => r.status !== 200).length, 'the requests in flight at node-a fail').toBeGreaterThan(0);
    // node-a leaves the pick set while its last report is still in Redis (its breaker opens after five
    // counted failures in a row) or when that report goes stale, whichever comes first; traffic keeps
    // flowing meanwhile and gets only 200s and clean 503/504s.
    await waitFor(
      async () => {
        const r = await infer(KEY.a, simpleBody(85_000 + offset++), headers);
        expect([200, 503, 504]).toContain(r.status);
        await r.arrayBuffer();
        return !gateway.directory.candidates('simple').some((n) => n.id === 'node-a') || undefined;
      },
      { what: 'node-a out of the pick set', timeoutMs: 30_000 },
    );
    // Its breaker opened: the calls it was serving broke and the ones after were refused, counted
    // failures in a row, although the rolling window still holds its earlier successes.
    await waitFor(
      () => log.lines.some((l) => l.includes('"msg":"circuit breaker changed"') && l.includes('"node":"node-a"') && l.includes('"state":"open"')) || undefined,
      { what: "node-a's breaker opening", timeoutMs: 10_000 },
    );
    const text = await metrics();
    // No leaks: nothing counted in flight or queued once every request is answered.
    for (const node of gateway.directory.all()) expect(node.localInflight, node.id).toBe(0);
    for (const line of text.split('\n').filter((l) => l.startsWith('tessera_gateway_queue_depth'))) expect(line).toMatch(/ 0$/);
    // The survivor serves.
    expect((await infer(KEY.a, simpleBody(90_000), headers)).status).toBe(200);
  });

  it('node SIGTERM: it drains, the gateway stops routing to it before it exits, it finishes its work and deregisters', async () => {
    const c = nodes.get('node-c')!;
    const exited = new Promise<number | null>((resolve) => c.process.once('exit', (code) => resolve(code)));
    const sleepyAtC = () => gateway.directory.all().find((n) => n.id === 'node-c')?.models.get('sleepy')?.inflight ?? 0;
    // Earlier tests' sleepy requests must have left node-c's reports first, so the next >0 is ours.
    await waitFor(() => sleepyAtC() === 0 || undefined, { what: 'node-c idle', timeoutMs: 10_000 });
    // Work in flight at node-c, sent straight to it, so it has something to finish while draining.
    const inFlight = fetch(`http://127.0.0.1:${c.httpPort}/v2/models/sleepy/infer`, { method: 'POST', body: sleepyBody(4000) });
    // Its own load report (through Redis) tells when node-c holds the request.
    await waitFor(() => sleepyAtC() > 0 || undefined, {
      what: 'the sleepy request in flight at node-c',
      timeoutMs: 10_000,
    });
    c.process.kill('SIGTERM');
    await waitFor(() => !gateway.directory.candidates('simple').some((n) => n.id === 'node-c') || undefined, {
      what: 'node-c out of the pick set',
      timeoutMs: 10_000,
    });
    expect(c.process.exitCode, 'node-c must still be running (draining) when the gateway stops picking it').toBeNull();
    const during = await Promise.all(Array.from({ length: 20 }, (_, i) => infer(KEY.a, simpleBody(60_000 + i), { 'cache-control': 'no-store' })));
    const bad = await Promise.all(during.filter((r) => r.status !== 200).map(async (r) => `${r.status} ${await r.text()}`));
    expect(bad).toEqual([]);
    expect(c.process.exitCode, 'still draining after the burst').toBeNull();
    expect((await inFlight).status).toBe(200);
    expect(await exited).toBe(0);
    await waitFor(() => !gateway.directory.all().some((n) => n.id === 'node-c') || undefined, { what: 'node-c deregistered', timeoutMs: 10_000 });
  });

  it('Redis restarted mid-load: no crash, requests keep being served, then the cache and rate limits work again', async () => {
    for (let i = 0; i < 3; i++) expect((await infer(KEY.limited, simpleBody(20_000 + i))).status).toBe(200);
    expect((await infer(KEY.limited, simpleBody(20_100))).status).toBe(429);

    const load = Array.from({ length: 20 }, (_, i) => infer(KEY.a, simpleBody(30_000 + i)));
    await redis.kill();
    const during = await Promise.all([...load, ...Array.from({ length: 10 }, (_, i) => infer(KEY.a, simpleBody(30_100 + i)))]);
    for (const r of during) expect(r.status, await r.clone().text()).toBe(200);
    await redis.restart();
    // The restarted Redis is empty; the gateway re-seeds its config's tenants on reconnect (the next test
    // proves that on its own). Seed them here too, so this test does not race the re-seeding and looks
    // only at the cache and the rate limits.
    const seeder = new Redis(redis.url);
    await seedTenants(createRedisTenantStore({ redis: seeder, logger: silentLogger }), config.tenants, Date.now());
    seeder.disconnect();

    // Cache: a MISS is stored again and then HITs (the store is used again, not bypassed forever).
    const body = simpleBody(40_000 + offset++);
    await waitFor(async () => (await infer(KEY.a, body)).headers.get('x-cache') === 'HIT' || undefined, {
      what: 'a cache HIT after Redis came back',
      timeoutMs: 30_000,
    });
    // Rate limits: the bucket lives in Redis again (the restarted Redis is empty, so a fresh burst).
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await infer(KEY.limited, simpleBody(50_000 + i))).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(metricValue(await metrics(), /^tessera_gateway_rate_limit_store_errors_total/)).toBeGreaterThan(0);
  });

  // A Redis restart that loses its data (no persistence, a failover to an empty replica, FLUSHALL) drops
  // the config's tenants and keys; the gateway seeds them again on every reconnect (entry-node.ts), so
  // their keys keep working past the tenant store's 5 s in-memory freshness window.
  it('Redis restarted with an empty dataset: the keys of the configured tenants keep working', async () => {
    await redis.restart();
    const until = Date.now() + 8000; // longer than the tenant store's 5 s freshness window
    while (Date.now() < until) {
      const res = await infer(KEY.a, simpleBody(95_000), { 'cache-control': 'no-store' });
      expect(res.status, await res.text()).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 250)); // polling a time window: there is no event to await
    }
  });

  it('no key ever appears in the logs or the metrics, through all of the above', async () => {
    const text = await metrics();
    const logs = log.lines.join('');
    expect(log.lines.length).toBeGreaterThan(0);
    for (const key of Object.values(KEY)) {
      expect(text).not.toContain(key);
      expect(logs).not.toContain(key);
    }
  });
});
