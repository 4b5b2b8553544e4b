/**
 * Attack 9 and the /metrics part of 10 (issue 14): a tenant requesting made-up model names must not
 * use up the model label's budget (they are counted under model="unknown"), and /metrics is behind
 * the admin key unless the config opens it. Real redis-server, a real node process, a real gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleBody } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const KEY = { tenant: 'tsk_sec-metrics-tenant', admin: 'sec-metrics-admin' };

describe('metrics: bounded model labels, admin key by default (redis + node + gateway)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-metrics-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        // No request limit: the prober may send as many names as it likes (1,200 > the label budget of 1,000).
        tiers: { probe: { priority: 1, queueTimeoutMs: 5000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
        tenants: [{ id: 'prober', tier: 'probe', keys: [{ id: 'p1', hash: await sha256Hex(KEY.tenant) }] }],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, adminKey: KEY.admin, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await node?.stop();
    await redis?.stop();
  });

  it('/metrics needs the admin key by default: none and a tenant key get 401, the admin key 200', async () => {
    expect(loadGatewayConfig('{}').metrics.requireAdminKey).toBe(true);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY.tenant}` } })).status).toBe(401);
    expect((await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY.admin}` } })).status).toBe(200);
  });

  it('1,200 made-up model names are counted under model="unknown", and real models keep their own label', async () => {
    const auth = { authorization: `Bearer ${KEY.tenant}` };
    for (let batch = 0; batch < 12; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const res = await fetch(`${gateway.url}/v2/models/made-up-${batch}-${i}/infer`, { method: 'POST', body: simpleBody(0), headers: auth });
          // 404 here; Triton answers an unknown model with 400, which the gateway may adopt: either is a refusal.
          expect([400, 404]).toContain(res.status);
          await res.arrayBuffer();
        }),
      );
    }
    const real = await fetch(`${gateway.url}/v2/models/simple/infer`, { method: 'POST', body: simpleBody(1), headers: auth });
    expect(real.status).toBe(200);
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY.admin}` } })).text();
    expect(text).not.toMatch(/made-up-/);
    expect(text).not.toMatch(/model="_other"/);
    expect(text).toMatch(/tessera_gateway_requests_total\{route="infer",tenant="prober",tier="probe",model="unknown",status="40[04]"\} 1200/);
    expect(text).toMatch(/tessera_gateway_requests_total\{route="infer",tenant="prober",tier="probe",model="simple",status="200"\} 1/);
  });
});
