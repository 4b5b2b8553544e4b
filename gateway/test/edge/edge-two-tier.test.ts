/**
 * The two-tier option: the edge Worker (real workerd) does auth, the KV cache and the per-tenant
 * quota, and forwards inference to a Node gateway (entry-node.ts, embedded mode) that admits and
 * fans out over gRPC to a real node. Both tiers know the same tenants (one config).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { startEdgeWorker, type EdgeWorker } from './edge-harness.js';

const KEY = 'tsk_two-tier';
const body = (offset: number): string =>
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i + offset) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });

describe('two-tier: edge Worker in front of a Node gateway', () => {
  let node: NodeProcess;
  let gateway: RunningGateway;
  let edge: EdgeWorker;

  beforeAll(async () => {
    node = await startNodeProcess();
    const configText = JSON.stringify({
      // /metrics is behind the admin key by default (issue 14); this test's loopback is the private scrape network.
      metrics: { requireAdminKey: false },
      tenants: [{ id: 't1', tier: 'standard', keys: [{ id: 't1-1', hash: await sha256Hex(KEY) }] }],
      cache: { models: { simple: { enabled: true } } },
    });
    gateway = await startGateway({
      config: loadGatewayConfig(configText),
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: node.grpcAddress, http: null }],
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
    edge = await startEdgeWorker({ GATEWAY_CONFIG: configText, UPSTREAM_GATEWAYS: gateway.url, UPSTREAM_API_KEY: KEY });
  });

  afterAll(async () => {
    await edge?.stop();
    await gateway?.close({ graceMs: 500 });
    await node?.stop();
  });

  it('authenticates at the edge, forwards to the Node gateway, and caches at the edge', async () => {
    const infer = (key: string) =>
      fetch(`${edge.url}/v2/models/simple/versions/1/infer`, { method: 'POST', body: body(40), headers: { authorization: `Bearer ${key}` } });
    expect((await infer('tsk_unknown')).status).toBe(401);
    const first = await infer(KEY);
    expect(first.status, await first.clone().text()).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const out = (await first.json()) as { outputs: { name: string; data: number[] }[] };
    expect(out.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 41));
    expect((await infer(KEY)).headers.get('x-cache')).toBe('HIT');
    // The Node gateway served exactly the one miss.
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/tessera_gateway_requests_total\{route="infer",tenant="t1",tier="standard",model="simple",status="200"\} 1\b/);
  });

  it('forwards metadata with the upstream key, and the Node gateway\'s errors with their status', async () => {
    const config = await fetch(`${edge.url}/v2/models/simple/config`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(config.status, await config.clone().text()).toBe(200);
    expect(((await config.json()) as { name: string }).name).toBe('simple');
    const missing = await fetch(`${edge.url}/v2/models/nope/infer`, { method: 'POST', body: body(0), headers: { authorization: `Bearer ${KEY}` } });
    // Triton's answer for an unknown model (INVALID_ARG), passed through with its status.
    expect(missing.status).toBe(400);
  });
});
