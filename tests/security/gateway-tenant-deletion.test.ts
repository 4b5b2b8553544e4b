/**
 * Attack 8 (issue 14): deleting a tenant left its cache entries, job records, idempotency keys and
 * sequence bindings behind, and a tenant re-created under the same id inherited them. Real
 * redis-server, two real node processes (`simple` and the stateful `silero_vad`) and a real gateway
 * running job workers: the tenant leaves something of each kind, is deleted and re-created through
 * the admin API, and the new tenant finds none of it.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleBody } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { startSileroNode, writeSileroRepository, type SileroNode } from '../../gateway/test/sequences/silero-node.js';

const ADMIN = 'sec-deletion-admin';
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

const vadChunk = (flags: Record<string, boolean>) =>
  JSON.stringify({
    parameters: { sequence_id: 77, ...flags },
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 512], data: Array.from({ length: 512 }, (_, k) => Math.sin(k / 10) * 0.5) }],
  });

describe('tenant deletion leaves nothing to inherit (redis + nodes + gateway with job workers)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let repository: string;
  let vad: SileroNode;
  let gateway: RunningGateway;

  const createTenant = async (): Promise<string> => {
    const created = await fetch(`${gateway.url}/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ id: 'acme', tier: 'standard' }) });
    expect(created.status).toBe(201);
    const key = await fetch(`${gateway.url}/admin/tenants/acme/keys`, { method: 'POST', headers: admin });
    expect(key.status).toBe(201);
    return ((await key.json()) as { key: string }).key;
  };
  const as = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra });
  const infer = (key: string, model: string, body: string) => fetch(`${gateway.url}/v2/models/${model}/infer`, { method: 'POST', body, headers: as(key) });
  const submitJob = (key: string, idempotencyKey: string) =>
    fetch(`${gateway.url}/v1/jobs?model=simple`, { method: 'POST', body: simpleBody(500), headers: as(key, { 'idempotency-key': idempotencyKey }) });

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await writeSileroRepository();
    [node, vad] = await Promise.all([
      startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-del-node', '--advertise-host', '127.0.0.1']),
      startSileroNode('sec-del-vad', repository, redis.url),
    ]);
    const config = loadGatewayConfig(JSON.stringify({ cache: { models: { simple: { enabled: true } } } }));
    gateway = await startGateway({
      config,
      redisUrl: redis.url,
      adminKey: ADMIN,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      fleet: { refreshMs: 200 },
      jobs: { worker: true, concurrency: 1 },
    });
    await waitFor(() => gateway.directory.candidates('simple').length === 1 && gateway.directory.candidates('silero_vad').length === 1, {
      what: 'both nodes in the fleet view',
      timeoutMs: 30_000,
    });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await Promise.all([node?.stop(), vad?.stop()]);
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  it('delete, re-create the same id: no cache hit, no job, no idempotent replay, no live sequence', async () => {
    const first = await createTenant();
    // What the first tenant leaves: a cache entry, a finished job under an Idempotency-Key, a live sequence.
    expect((await infer(first, 'simple', simpleBody(5))).headers.get('x-cache')).toBe('MISS');
    expect((await infer(first, 'simple', simpleBody(5))).headers.get('x-cache')).toBe('HIT');
    const submitted = await submitJob(first, 'order-1');
    expect(submitted.status).toBe(202);
    const jobId = ((await submitted.json()) as { id: string }).id;
    await waitFor(async () => {
      const job = (await (await fetch(`${gateway.url}/v1/jobs/${jobId}`, { headers: as(first) })).json()) as { status: string };
      return job.status === 'succeeded' ? job : undefined;
    }, { what: 'the first tenant’s job', timeoutMs: 20_000 });
    expect((await infer(first, 'silero_vad', vadChunk({ sequence_start: true }))).status).toBe(200);
    expect((await infer(first, 'silero_vad', vadChunk({}))).status).toBe(200);

    const deleted = await fetch(`${gateway.url}/admin/tenants/acme`, { method: 'DELETE', headers: admin });
    expect(deleted.status).toBe(200);
    expect((await infer(first, 'simple', simpleBody(5))).status).toBe(401);

    const second = await createTenant();
    const cached = await infer(second, 'simple', simpleBody(5));
    expect(cached.status).toBe(200);
    expect(cached.headers.get('x-cache')).toBe('MISS');
    expect((await fetch(`${gateway.url}/v1/jobs/${jobId}`, { headers: as(second) })).status).toBe(404);
    expect((await fetch(`${gateway.url}/v1/jobs/${jobId}/result`, { headers: as(second) })).status).toBe(404);
    const replay = await submitJob(second, 'order-1');
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(((await replay.json()) as { id: string }).id).not.toBe(jobId);
    const sequence = await infer(second, 'silero_vad', vadChunk({}));
    expect(sequence.status).toBe(400);
    expect(((await sequence.json()) as { error: string }).error).toBe(
      "sequence 77 of model 'silero_vad' is not known to the gateway: send sequence_start first",
    );
  });
});
