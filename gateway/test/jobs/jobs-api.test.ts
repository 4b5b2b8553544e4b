/**
 * Async jobs end to end: real redis-server, a real node process, the gateway running job workers in
 * its own process (`jobs.worker`), and a real HTTP server receiving webhooks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { verifyWebhookSignature } from '../../src/core/jobs/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { client, finished, jobsConfig, KEY, simpleBody, sleepyBody, type JobJson } from './jobs-fixtures.js';

describe('async jobs (gateway with in-process workers)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'jobs-node', '--advertise-host', '127.0.0.1']);
    gateway = await startGateway({
      config: await jobsConfig(),
      redisUrl: redis.url,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      fleet: { refreshMs: 200 },
      jobs: { worker: true, concurrency: 1, webhooks: { backoffMs: 50 } },
    });
    api = client(gateway);
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('answers 202 with Location; polling gives the result, equal to a direct infer', async () => {
    const res = await api.submit(KEY.a, simpleBody(10));
    expect(res.status, await res.clone().text()).toBe(202);
    const accepted = (await res.json()) as JobJson;
    expect(res.headers.get('location')).toBe(`/v1/jobs/${accepted.id}`);
    expect(['queued', 'running', 'succeeded']).toContain(accepted.status);
    expect(accepted).toMatchObject({ model: 'simple', tier: 'standard' });
    const done = await api.until(KEY.a, accepted.id, finished, 'the job to finish');
    expect(done.status).toBe('succeeded');
    const direct = await api.infer(KEY.a, simpleBody(10));
    expect(direct.status).toBe(200);
    expect(done.result).toEqual(await direct.json());
    // The exact response, as /infer answers it.
    const raw = await api.get(KEY.a, done.result_url!);
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual(done.result);
  });

  it('turns an infer request with Prefer: respond-async into a job', async () => {
    const res = await api.infer(KEY.a, simpleBody(20), 'simple', { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    const { id } = (await res.json()) as JobJson;
    const done = await api.until(KEY.a, id, finished, 'the job to finish');
    expect(done.result!.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 21));
  });

  it('returns the same job for the same Idempotency-Key and tenant, and never across tenants', async () => {
    const headers = { 'idempotency-key': 'order-42' };
    const first = await api.submit(KEY.a, simpleBody(30), 'model=simple', headers);
    expect(first.status).toBe(202);
    const id = ((await first.json()) as JobJson).id;
    const again = await api.submit(KEY.a, simpleBody(30), 'model=simple', headers);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as JobJson).id).toBe(id);
    // The same key with another body is a client bug.
    const other = await api.submit(KEY.a, simpleBody(31), 'model=simple', headers);
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: string }).error).toMatch(/Idempotency-Key/);
    // Another tenant with the same key gets its own job.
    const b = await api.submit(KEY.b, simpleBody(30), 'model=simple', headers);
    expect(b.status).toBe(202);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(((await b.json()) as JobJson).id).not.toBe(id);
  });

  it('hides a job from every other tenant: read, result, cancel and idempotent replay are 404 or new', async () => {
    const res = await api.submit(KEY.a, simpleBody(40));
    const { id } = (await res.json()) as JobJson;
    await api.until(KEY.a, id, finished, 'the job to finish');
    for (const path of [`/v1/jobs/${id}`, `/v1/jobs/${id}/result`]) {
      const r = await api.get(KEY.b, path);
      expect(r.status, path).toBe(404);
    }
    expect((await api.del(KEY.b, `/v1/jobs/${id}`)).status).toBe(404);
    expect((await api.get(KEY.a, '/v1/jobs/not-a-job-id')).status).toBe(404);
    expect((await api.get('tsk_nobody', `/v1/jobs/${id}`)).status).toBe(401);
  });

  it('cancels a job that has not started, and refuses to cancel a running one', async () => {
    // One worker slot: a long sleepy job holds it, so the next job stays queued.
    const blocker = (await (await api.submit(KEY.a, sleepyBody(1500), 'model=sleepy')).json()) as JobJson;
    await api.until(KEY.a, blocker.id, (j) => j.status === 'running', 'the blocker to run');
    const queued = (await (await api.submit(KEY.a, simpleBody(50))).json()) as JobJson;
    expect(queued.status).toBe('queued');
    const cancel = await api.del(KEY.a, `/v1/jobs/${queued.id}`);
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as JobJson).status).toBe('cancelled');
    expect(((await (await api.get(KEY.a, `/v1/jobs/${queued.id}`)).json()) as JobJson).status).toBe('cancelled');
    expect((await api.del(KEY.a, `/v1/jobs/${queued.id}`)).status).toBe(409);
    const running = await api.del(KEY.a, `/v1/jobs/${blocker.id}`);
    expect(running.status).toBe(409);
    expect(((await running.json()) as { status: string }).status).toBe('running');
    const done = await api.until(KEY.a, blocker.id, finished, 'the blocker to finish');
    expect(done.status).toBe('succeeded');
  });

  it('reports why a job failed', async () => {
    const res = await api.submit(KEY.a, simpleBody(60), 'model=no_such_model');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as JobJson;
    const done = await api.until(KEY.a, id, finished, 'the job to fail');
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^INVALID_ARG: Request for unknown model: 'no_such_model' is not found/);
    expect((await api.get(KEY.a, `/v1/jobs/${id}/result`)).status).toBe(409);
  });

  it('refuses malformed submissions at once (4xx, nothing queued)', async () => {
    expect((await api.submit(KEY.a, simpleBody(1), '')).status).toBe(400);
    expect((await api.submit(KEY.a, '{"inputs": 5}')).status).toBe(400);
    expect((await api.submit(KEY.a, simpleBody(1), 'model=simple', { 'x-tessera-webhook-url': 'ftp://x' })).status).toBe(400);
    expect((await api.submit(KEY.a, simpleBody(1), 'model=simple', { 'idempotency-key': 'has space' })).status).toBe(400);
  });

  describe('webhooks', () => {
    let hooks: Server;
    let hookUrl: string;
    const received: { body: string; signature: string | null; attempt: string | null; status: number }[] = [];

    beforeAll(async () => {
      hooks = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          // The first delivery fails: the retry must come, signed again.
          const status = received.length === 0 ? 500 : 200;
          received.push({ body, signature: req.headers['tessera-signature'] as string | null, attempt: req.headers['tessera-delivery-attempt'] as string | null, status });
          res.writeHead(status).end();
        });
      });
      await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
    });
    afterAll(() => new Promise<void>((resolve) => hooks.close(() => resolve())));

    it('refuses a webhook until the tenant has a secret', async () => {
      const res = await api.submit(KEY.b, simpleBody(70), 'model=simple', { 'x-tessera-webhook-url': hookUrl });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/webhook secret/);
    });

    it('posts the outcome signed with the tenant secret, retried after a 500', async () => {
      const rotate = await fetch(`${gateway.url}/admin/tenants/tb/webhook-secret`, { method: 'POST', headers: { authorization: `Bearer ${KEY.admin}` } });
      expect(rotate.status).toBe(201);
      const { webhookSecret } = (await rotate.json()) as { webhookSecret: string };
      expect((await fetch(`${gateway.url}/admin/tenants/tb/webhook-secret`, { method: 'POST', headers: { authorization: `Bearer ${KEY.b}` } })).status).toBe(401);

      const res = await api.submit(KEY.b, simpleBody(80), 'model=simple', { 'x-tessera-webhook-url': hookUrl });
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as JobJson;
      await waitFor(() => received.some((r) => r.status === 200), { what: 'a delivered webhook', timeoutMs: 20_000 });
      expect(received.map((r) => [r.status, r.attempt])).toEqual([[500, '1'], [200, '2']]);
      for (const delivery of received) {
        expect(await verifyWebhookSignature(webhookSecret, delivery.body, delivery.signature, Date.now())).toBe(true);
        expect(await verifyWebhookSignature('whsec_wrong', delivery.body, delivery.signature, Date.now())).toBe(false);
      }
      const payload = JSON.parse(received[1]!.body) as { type: string; job: JobJson };
      expect(payload.type).toBe('job.succeeded');
      expect(payload.job.id).toBe(id);
      expect(payload.job.result!.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 81));
    });
  });

  it('spills an infer request refused for its queue timeout into a job, when asked', async () => {
    // Once the gateway knows sleepy takes ~400 ms, admission refuses at once a request whose tier
    // allows 200 ms in all (the quick tier): it could not be answered in time.
    for (let i = 0; i < 2; i++) expect((await api.infer(KEY.premium, sleepyBody(400), 'sleepy')).status).toBe(200);
    const refused = await api.infer(KEY.quick, sleepyBody(1), 'sleepy');
    expect(refused.status).toBe(503);
    const spilled = await api.infer(KEY.quick, sleepyBody(1), 'sleepy', { prefer: 'respond-async, spill-over' });
    expect(spilled.status, await spilled.clone().text()).toBe(202);
    expect(spilled.headers.get('preference-applied')).toBe('respond-async');
    expect(spilled.headers.get('location')).toMatch(/^\/v1\/jobs\/j[0-9a-f]{32}$/);
    const { id } = (await spilled.json()) as JobJson;
    // The job runs with the job run timeout, not the tier's queue timeout.
    const done = await api.until(KEY.quick, id, finished, 'the spilled job to finish', 30_000);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.result!.outputs[0]!.data).toEqual([1]);
  });

  it('exposes job metrics: by state, tier and model, and wait and run times', async () => {
    // /metrics is behind the admin key by default (issue 14).
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY.admin}` } })).text();
    expect(text).toMatch(/tessera_gateway_jobs_total\{state="queued",tier="standard",model="simple"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_jobs_total\{state="succeeded",tier="standard",model="simple"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_jobs_total\{state="failed",tier="standard",model="no_such_model"\} 1/);
    expect(text).toMatch(/tessera_gateway_jobs_total\{state="cancelled",tier="standard",model="simple"\} 1/);
    expect(text).toMatch(/tessera_gateway_jobs_spilled_total\{tier="quick",model="sleepy"\} 1/);
    expect(text).toMatch(/tessera_gateway_job_wait_seconds_count\{tier="standard",model="simple"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_job_run_seconds_count\{tier="standard",model="simple",state="succeeded"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_jobs\{state="completed"\} [1-9]/);
    expect(text).toMatch(/tessera_gateway_requests_total\{route="jobs",tenant="ta",tier="standard",model="simple",status="202"\} [1-9]/);
  });
});
