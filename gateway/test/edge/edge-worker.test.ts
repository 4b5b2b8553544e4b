/**
 * The edge build end to end: the Worker in real workerd (wrangler `unstable_dev`: local KV and
 * Durable Objects) in front of two real node processes (`bin/tessera-node.js` with `simple` and
 * `sleepy`) on loopback, reached over KServe v2 HTTP. The fleet is learned the edge way: load reports
 * POSTed to /admin/fleet/report with the fleet token (here by the test, in production by a pusher).
 * One Worker for the whole file (starting workerd is the slow part).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInferResponseBody, encodeInferRequestBody } from '../../../shared/src/kserve/index.js';
import type { LoadReport } from '../../../shared/src/fleet/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { simpleBody, simpleRequest, sleepyBody } from '../support/test-node-requests.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { loadReport, startEdgeWorker, type EdgeWorker } from './edge-harness.js';

const ADMIN = 'edge-admin-key';
const FLEET = 'edge-fleet-token';
const KEY = { a: 'tsk_edge-a', premium: 'tsk_edge-premium', bulk: 'tsk_edge-bulk', free: 'tsk_edge-free', limited: 'tsk_edge-limited' };
const unlimited = { requestsPerSecond: 1000, burst: 1000, elementsPerSecond: 0, elementsBurst: 0 };

async function gatewayConfig(): Promise<string> {
  const tenant = async (id: string, tier: string, key: string, extra: object = {}) => ({ id, tier, keys: [{ id: `${id}-1`, hash: await sha256Hex(key) }], ...extra });
  return JSON.stringify({
    tiers: {
      premium: { queueTimeoutMs: 20_000, rateLimits: unlimited },
      free: { queueTimeoutMs: 500, queueShare: 1, rateLimits: unlimited },
      bulk: { priority: 3, queueTimeoutMs: 20_000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'], rateLimits: unlimited },
      limited: {
        priority: 2,
        queueTimeoutMs: 2000,
        queueShare: 1,
        cacheTtlSeconds: 0,
        allowedModels: ['*'],
        rateLimits: { requestsPerSecond: 1, burst: 2, elementsPerSecond: 0, elementsBurst: 0 },
      },
    },
    tenants: [
      await tenant('ta', 'standard', KEY.a, { allowedModels: ['simple'] }),
      await tenant('tp', 'premium', KEY.premium),
      await tenant('tb', 'bulk', KEY.bulk),
      await tenant('tf', 'free', KEY.free),
      await tenant('tl', 'limited', KEY.limited),
    ],
    cache: { models: { simple: { enabled: true } } },
  });
}

describe('edge gateway on workerd (two real nodes over HTTP)', () => {
  let nodes: NodeProcess[];
  let edge: EdgeWorker;

  const infer = (key: string, body: string | Uint8Array, headers: Record<string, string> = {}, model = 'simple') =>
    fetch(`${edge.url}/v2/models/${model}/infer`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, ...headers } });
  const push = (reports: LoadReport | LoadReport[], token = FLEET) =>
    fetch(`${edge.url}/admin/fleet/report`, { method: 'POST', body: JSON.stringify(reports), headers: { authorization: `Bearer ${token}` } });
  const depth = async (model: string): Promise<number> => {
    const res = await fetch(`${edge.url}/admin/edge/queues/${model}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return ((await res.json()) as { depth: number }).depth;
  };
  const inferCount = async (node: NodeProcess): Promise<number> => {
    const res = await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/simple/stats`);
    const stats = (await res.json()) as { model_stats: { inference_count?: number }[] };
    return stats.model_stats.reduce((n, s) => n + (s.inference_count ?? 0), 0);
  };

  beforeAll(async () => {
    const [config, a, b] = await Promise.all([gatewayConfig(), startNodeProcess(), startNodeProcess()]);
    nodes = [a, b];
    edge = await startEdgeWorker({ GATEWAY_CONFIG: config, TESSERA_ADMIN_KEY: ADMIN, TESSERA_FLEET_TOKEN: FLEET, FLEET_REFRESH_MS: '100' });
    // Node A serves sleepy too, reported with capacity 1 so that two requests fill it (room = 2 × capacity).
    const res = await push([
      loadReport('node-a', a.httpPort, [{ name: 'simple' }, { name: 'sleepy', capacity: 1 }]),
      loadReport('node-b', b.httpPort, [{ name: 'simple' }]),
    ]);
    expect(res.status, await res.text()).toBe(204);
  });

  afterAll(async () => {
    await edge?.stop();
    await Promise.all((nodes ?? []).map((n) => n.stop()));
  });

  it('learns the fleet from pushed reports, and refuses pushes without the fleet token', async () => {
    expect((await push(loadReport('node-x', 1, []), 'wrong')).status).toBe(401);
    const bad = await push({ ...loadReport('node-x', 1, []), ttlMs: 0 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/ttlMs/);
    const fleet = await fetch(`${edge.url}/admin/fleet`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(((await fleet.json()) as { reports: LoadReport[] }).reports.map((r) => r.nodeId).sort()).toEqual(['node-a', 'node-b']);
    expect((await fetch(`${edge.url}/admin/fleet`)).status).toBe(401);
  });

  it('authenticates: 401 without or with an unknown key, 403 for a model outside the tenant\'s list', async () => {
    expect((await fetch(`${edge.url}/v2/models/simple/infer`, { method: 'POST', body: simpleBody(0) })).status).toBe(401);
    expect((await infer('tsk_nobody', simpleBody(0))).status).toBe(401);
    const forbidden = await infer(KEY.a, sleepyBody(1), {}, 'sleepy');
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { error: string }).error).toMatch(/may not use model 'sleepy'/);
    expect((await fetch(`${edge.url}/v2/health/ready`)).status).toBe(200);
  });

  it('serves JSON infer, then a cache HIT from KV for the same inputs', async () => {
    const first = await infer(KEY.a, simpleBody(100));
    expect(first.status, await first.clone().text()).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const body = (await first.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 101));
    const again = await infer(KEY.a, simpleBody(100));
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(await again.json()).toEqual(body);
  });

  it('carries binary tensors both ways through the HTTP transport', async () => {
    const encoded = encodeInferRequestBody({ ...simpleRequest(7), id: 'bin-1' }, { binaryInputs: true, binaryDataOutput: true });
    const res = await infer(KEY.a, encoded.body, { ...encoded.headers, 'cache-control': 'no-store' });
    expect(res.status, await res.clone().text()).toBe(200);
    const decoded = decodeInferResponseBody(new Uint8Array(await res.arrayBuffer()), res.headers.get('inference-header-content-length'));
    expect(decoded.id).toBe('bin-1');
    const sum = decoded.outputs.find((o) => o.name === 'OUTPUT0')!;
    const diff = decoded.outputs.find((o) => o.name === 'OUTPUT1')!;
    expect(Array.from(new Int32Array(sum.data.slice().buffer))).toEqual(Array.from({ length: 16 }, (_, i) => i + 8));
    expect(Array.from(new Int32Array(diff.data.slice().buffer))).toEqual(Array.from({ length: 16 }, (_, i) => i + 6));
  });

  it('routes across both nodes', async () => {
    const before = await Promise.all(nodes.map(inferCount));
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => infer(KEY.a, simpleBody(1000 + i), { 'cache-control': 'no-store' })));
    for (const r of results) expect(r.status).toBe(200);
    const after = await Promise.all(nodes.map(inferCount));
    const served = after.map((n, i) => n - before[i]!);
    expect(served[0]! + served[1]!).toBe(24);
    expect(served[0], `served per node: ${served.join(', ')}`).toBeGreaterThan(0);
    expect(served[1], `served per node: ${served.join(', ')}`).toBeGreaterThan(0);
  });

  it('rate-limits per tenant through the Durable Object: 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${edge.url}/v2`, { headers: { authorization: `Bearer ${KEY.limited}` } });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited!.headers.get('ratelimit-limit')).toBe('2');
  });

  it('rejects a request that cannot be admitted before its tier\'s queue timeout: 503 with Retry-After', async () => {
    // Two premium requests fill node A's room for sleepy; a third waits in the global queue.
    const fillers = Array.from({ length: 3 }, () => infer(KEY.premium, sleepyBody(1000), {}, 'sleepy'));
    await waitFor(async () => ((await depth('sleepy')) >= 1 ? true : undefined), { what: 'a premium request waiting in the admission queue' });
    const free = await infer(KEY.free, sleepyBody(1), {}, 'sleepy');
    expect(free.status, await free.clone().text()).toBe(503);
    expect(Number(free.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await free.json()) as { error: string }).error).toMatch(/queue of model 'sleepy'|deadline/);
    for (const r of await Promise.all(fillers)) expect(r.status, await r.text()).toBe(200);
  });

  it('serves premium before bulk requests queued earlier', async () => {
    const order: string[] = [];
    const send = (key: string, tag: string, ms: number) =>
      infer(key, sleepyBody(ms), {}, 'sleepy').then(async (r) => {
        expect(r.status, await r.clone().text()).toBe(200);
        order.push(tag);
      });
    // Long enough that, on a busy box, the four below are queued behind them before either ends (with 600 ms
    // the fill could finish first and the bulk requests went straight to the node, never queued).
    const fill = [send(KEY.bulk, 'fill-0', 2_500), send(KEY.bulk, 'fill-1', 2_500)];
    const queued = Array.from({ length: 4 }, (_, i) => send(KEY.bulk, `bulk-${i}`, 100));
    await waitFor(async () => ((await depth('sleepy')) >= 4 ? true : undefined), { what: 'four bulk requests waiting in the admission queue' });
    const premium = send(KEY.premium, 'premium', 100);
    await Promise.all([...fill, ...queued, premium]);
    // FIFO would finish premium last; priority dispatches it as soon as a fill request completes.
    const bulkAfter = order.slice(order.indexOf('premium') + 1).filter((tag) => tag.startsWith('bulk-')).length;
    expect(bulkAfter, `order: ${order.join(' ')}`).toBeGreaterThanOrEqual(3);
  });
});
