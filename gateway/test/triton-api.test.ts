/**
 * The gateway speaks Triton's API like the node: `/v2` names the server "triton" (configurable), the
 * repository index and model statistics are served per tenant, an unknown model gets Triton's 400,
 * and a model the gateway knows with no node serving it gets 503 (worth a retry), not 404. A real
 * redis-server, a real node process publishing to it, and the gateway on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from './support/test-node-process.js';
import { simpleBody } from './support/test-node-requests.js';
import { loadGatewayConfig } from '../src/config/index.js';
import { sha256Hex } from '../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../src/entry-node.js';

const KEY = { a: 'tsk_triton-api-a', b: 'tsk_triton-api-b' };

interface ModelStat {
  name: string;
  version: string;
  inference_count: number;
  execution_count: number;
  inference_stats: { success: { count: number; ns: number }; fail: { count: number } };
}

describe('Triton API through the gateway', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;

  const call = (key: string, method: string, path: string, body?: string) =>
    fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'node-t', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        tenants: [
          // Tenant A may use `simple` only; B anything.
          { id: 'ta', tier: 'standard', allowedModels: ['simple'], keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
          { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEY.b) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('GET /v2 names the server "triton"', async () => {
    const answer = await call(KEY.a, 'GET', '/v2');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ name: 'triton', extensions: expect.arrayContaining(['statistics', 'model_repository']) });
  });

  it('POST /v2/repository/index lists the models the tenant may use; GET is 405', async () => {
    const a = await call(KEY.a, 'POST', '/v2/repository/index', '{}');
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual([{ name: 'simple', version: '1', state: 'READY' }]);
    const b = (await (await call(KEY.b, 'POST', '/v2/repository/index')).json()) as { name: string }[];
    expect(b.map((m) => m.name).sort()).toEqual(['simple', 'sleepy']);
    expect((await call(KEY.a, 'GET', '/v2/repository/index')).status).toBe(405);
  });

  it("/v2/models/stats counts the tenant's own requests only", async () => {
    for (let i = 0; i < 2; i++) expect((await call(KEY.a, 'POST', '/v2/models/simple/infer', simpleBody(i))).status).toBe(200);
    expect((await call(KEY.b, 'POST', '/v2/models/simple/infer', simpleBody(9))).status).toBe(200);
    const all = (await (await call(KEY.a, 'GET', '/v2/models/stats')).json()) as { model_stats: ModelStat[] };
    expect(all.model_stats).toHaveLength(1);
    expect(all.model_stats[0]).toMatchObject({ name: 'simple', inference_count: 2, execution_count: 2, inference_stats: { success: { count: 2 }, fail: { count: 0 } } });
    expect(all.model_stats[0]!.inference_stats.success.ns).toBeGreaterThan(0);
    const one = (await (await call(KEY.a, 'GET', '/v2/models/simple/stats')).json()) as { model_stats: ModelStat[] };
    expect(one.model_stats.map((s) => s.inference_count)).toEqual([2]);
    const other = (await (await call(KEY.b, 'GET', '/v2/models/simple/stats')).json()) as { model_stats: ModelStat[] };
    expect(other.model_stats.map((s) => s.inference_count)).toEqual([1]);
    expect((await call(KEY.a, 'GET', '/v2/models/sleepy/stats')).status).toBe(403);
  });

  it("an unknown model: Triton's 400 and wording", async () => {
    const answer = await call(KEY.b, 'POST', '/v2/models/nope/infer', simpleBody(1));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({ error: "Request for unknown model: 'nope' is not found" });
  });

  it('a known model with no node serving it: 503 with Retry-After, not 404', async () => {
    await node.stop();
    await waitFor(() => gateway.directory.all().length === 0, { what: 'the node to leave the fleet view', timeoutMs: 20_000 });
    const answer = await call(KEY.a, 'POST', '/v2/models/simple/infer', simpleBody(1));
    expect(answer.status).toBe(503);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await answer.json()) as { error: string }).error).toMatch(/no node is serving model 'simple'/);
    const index = await (await call(KEY.a, 'POST', '/v2/repository/index', '{"ready":false}')).json();
    expect(index).toEqual([{ name: 'simple', version: '1', state: 'UNAVAILABLE', reason: 'no node is serving it' }]);
  });
});
