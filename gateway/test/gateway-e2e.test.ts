/**
 * The gateway end to end: a real redis-server, two real node processes (`bin/tessera-node.js` with the
 * `simple` and `sleepy` models, publishing load reports to Redis) and the gateway on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequestBody, decodeInferResponseBody } from '../../shared/src/kserve/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from './support/test-node-process.js';
import { simpleBody, simpleRequest, sleepyBody } from './support/test-node-requests.js';
import { loadGatewayConfig } from '../src/config/index.js';
import { sha256Hex } from '../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../src/entry-node.js';

const KEY = { a: 'tsk_e2e-tenant-a', b: 'tsk_e2e-tenant-b', premium: 'tsk_e2e-premium', free: 'tsk_e2e-free' };

describe('gateway end to end (redis + two nodes)', () => {
  let redis: RedisServer;
  let nodes: NodeProcess[];
  let gateway: RunningGateway;

  const infer = (key: string, body: string | Uint8Array, headers: Record<string, string> = {}, model = 'simple') =>
    fetch(`${gateway.url}/v2/models/${model}/infer`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, ...headers } });

  beforeAll(async () => {
    redis = await startRedisServer();
    nodes = await Promise.all(
      ['node-a', 'node-b'].map((id) => startNodeProcess(['--redis-url', redis.url, '--node-id', id, '--advertise-host', '127.0.0.1'])),
    );
    const config = loadGatewayConfig(
      JSON.stringify({
        // /metrics is behind the admin key by default (issue 14); this test's loopback is the private scrape network.
        metrics: { requireAdminKey: false },
        tiers: {
          premium: { queueTimeoutMs: 20_000 },
          free: { queueTimeoutMs: 20_000, queueShare: 1, rateLimits: { requestsPerSecond: 1000, burst: 1000 } },
        },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
          { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEY.b) }] },
          { id: 'tp', tier: 'premium', keys: [{ id: 'tp1', hash: await sha256Hex(KEY.premium) }] },
          { id: 'tf', tier: 'free', keys: [{ id: 'tf1', hash: await sha256Hex(KEY.free) }] },
        ],
        // A long L1 life, so that the Redis outage test below cannot outlast its copies on a slow machine.
        cache: { localMaxAgeSeconds: 600, models: { simple: { enabled: true } } },
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 2, { what: 'both nodes in the fleet view', timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await Promise.all((nodes ?? []).map((n) => n.stop()));
    await redis?.stop();
  });

  const hitsBySource = async (source: string): Promise<number> => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    return Number(new RegExp(`tessera_gateway_cache_hits_by_source_total\\{model="simple",source="${source}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  };

  it("serves JSON infer with an API key, then a cache HIT from the gateway's memory; another tenant never gets that entry", async () => {
    const first = await infer(KEY.a, simpleBody(100));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const body = (await first.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 101));
    const localBefore = await hitsBySource('local');
    const again = await infer(KEY.a, simpleBody(100));
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(await again.json()).toEqual(body);
    expect(await hitsBySource('local')).toBe(localBefore + 1); // answered by the in-process copy (L1)
    // The same request from tenant B: neither A's copy in this gateway nor A's Redis entry.
    const other = await infer(KEY.b, simpleBody(100));
    expect(other.headers.get('x-cache')).toBe('MISS');
    expect(await hitsBySource('local')).toBe(localBefore + 1);
    expect((await infer(KEY.b, simpleBody(100))).headers.get('x-cache')).toBe('HIT');
  });

  it('serves binary tensors (Triton client style) and keeps request ids per request', async () => {
    const encoded = encodeInferRequestBody({ ...simpleRequest(7), id: 'bin-1' }, { binaryInputs: true, binaryDataOutput: true });
    const res = await infer(KEY.a, encoded.body, encoded.headers);
    expect(res.status).toBe(200);
    const decoded = decodeInferResponseBody(new Uint8Array(await res.arrayBuffer()), res.headers.get('inference-header-content-length'));
    expect(decoded.id).toBe('bin-1');
    const out = decoded.outputs.find((o) => o.name === 'OUTPUT0')!;
    expect(Array.from(new Int32Array(out.data.slice().buffer))).toEqual(Array.from({ length: 16 }, (_, i) => i + 8));
    const second = encodeInferRequestBody({ ...simpleRequest(7), id: 'bin-2' }, { binaryInputs: true, binaryDataOutput: true });
    const hit = await infer(KEY.a, second.body, second.headers);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(decodeInferResponseBody(new Uint8Array(await hit.arrayBuffer()), hit.headers.get('inference-header-content-length')).id).toBe('bin-2');
  });

  it('exposes the metrics of what happened', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).toMatch(/tessera_gateway_requests_total\{route="infer",tenant="ta",tier="standard",model="simple",status="200"\} \d+/);
    expect(text).toMatch(/tessera_gateway_cache_requests_total\{tenant="ta",model="simple",version="1",result="hit"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_fleet_nodes 2/);
    expect(text).not.toContain(KEY.a);
  });

  it('serves premium before free when the queue is saturated', async () => {
    // sleepy holds each request INPUT0[0] ms at the node; capacity is finite, so later requests queue.
    const order: string[] = [];
    const send = (key: string, tag: string) =>
      infer(key, sleepyBody(300), {}, 'sleepy').then(async (r) => {
        expect(r.status, await r.clone().text()).toBe(200);
        order.push(tag);
      });
    const free = Array.from({ length: 60 }, (_, i) => send(KEY.free, `free-${i}`));
    // Wait until many free requests wait in the gateway's admission queue, then send one premium request.
    const queued = await waitFor(async () => {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      const depth = Number(/tessera_gateway_queue_depth\{model="sleepy"\} (\d+)/.exec(text)?.[1] ?? 0);
      return depth >= 10 ? depth : undefined;
    }, { what: 'free requests queued in the gateway' });
    const premium = send(KEY.premium, 'premium');
    await Promise.all([...free, premium]);
    // FIFO would finish it after every free request queued before it; priority puts it at the head of
    // the gateway's queue (the requests already at a node are served in the node's order).
    const freeAfter = order.slice(order.indexOf('premium') + 1).length;
    expect(freeAfter, `queued when premium came: ${queued}; order: ${order.join(' ')}`).toBeGreaterThanOrEqual(queued / 2);
  });

  it('keeps answering, with clean errors only, when a node is killed mid-load', async () => {
    const statuses: number[] = [];
    const load = Array.from({ length: 40 }, (_, i) =>
      infer(KEY.a, simpleBody(1000 + i)).then(async (r) => {
        statuses.push(r.status);
        if (r.status !== 200) expect(((await r.json()) as { error: string }).error).toEqual(expect.any(String));
      }),
    );
    nodes[0]!.process.kill('SIGKILL');
    await Promise.all(load);
    expect(statuses.every((s) => s === 200 || s === 503 || s === 504)).toBe(true);
    // Traffic moves to the surviving node.
    const res = await waitFor(async () => {
      const r = await infer(KEY.a, simpleBody(5000 + Math.floor(Math.random() * 1e6)));
      return r.status === 200 ? r : undefined;
    }, { what: 'a request served by the surviving node' });
    expect(res.status).toBe(200);
  });

  it('still serves requests when Redis stops mid-load: cache BYPASS, except HITs from the copies this gateway holds', async () => {
    const before = await infer(KEY.a, simpleBody(7000));
    expect(before.status).toBe(200);
    await redis.kill();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => infer(KEY.a, simpleBody(7000 + (i % 2)))));
    for (const [i, r] of results.entries()) {
      expect(r.status, await r.clone().text()).toBe(200);
      expect(r.headers.get('x-cache')).toBe(i % 2 === 0 ? 'HIT' : 'BYPASS');
    }
    await redis.restart();
  });
});
