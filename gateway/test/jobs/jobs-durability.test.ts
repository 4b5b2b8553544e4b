/**
 * Nothing accepted is lost: jobs survive a worker process killed mid-job (SIGKILL) and a Redis
 * restart (AOF persistence, fsync always, the server SIGKILLed). Real redis-server, a real node, the
 * gateway without workers, and `bin/tessera-jobs.js` as the worker process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { client, finished, jobsConfig, KEY, simpleBody, sleepyBody, startJobsProcess, type JobJson, type JobsProcess } from './jobs-fixtures.js';

/** A dead worker's job resumes after its lock expires and a stalled check finds it. */
const FAST_STALL = { TESSERA_JOBS_LOCK_MS: '1500', TESSERA_JOBS_STALLED_INTERVAL_MS: '500' };

describe('async jobs survive crashes', () => {
  let dataDir: string;
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let api: ReturnType<typeof client>;
  const workers: JobsProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-jobs-aof-'));
    redis = await startRedisServer({ extraArgs: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dataDir] });
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'durable-node', '--advertise-host', '127.0.0.1']);
    // No workers in the gateway: only tessera-jobs processes run jobs here.
    gateway = await startGateway({ config: await jobsConfig(), redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    api = client(gateway);
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes a job whose worker process was SIGKILLed mid-job, once a worker runs again', async () => {
    const first = await startJobsProcess(redis.url, FAST_STALL);
    workers.push(first);
    const res = await api.submit(KEY.a, sleepyBody(3000), 'model=sleepy');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as JobJson;
    await api.until(KEY.a, id, (j) => j.status === 'running', 'the job to run');
    await first.kill();
    // Dead worker: the job is still running as far as Redis knows, until its lock expires.
    expect(((await (await api.get(KEY.a, `/v1/jobs/${id}`)).json()) as JobJson).status).not.toBe('succeeded');
    const second = await startJobsProcess(redis.url, FAST_STALL);
    workers.push(second);
    const done = await api.until(KEY.a, id, finished, 'the job to finish after the restart', 40_000);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(done.result!.outputs[0]!.data).toEqual([3000]);
  });

  it('keeps queued jobs across a Redis crash and restart (AOF), and runs them afterwards', async () => {
    // No worker may take the jobs before Redis goes down.
    await Promise.all(workers.map((w) => w.stop()));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.submit(KEY.a, simpleBody(100 * i), 'model=simple', { 'idempotency-key': `aof-${i}` });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as JobJson).id);
    }
    await redis.kill();
    // While Redis is away, submissions fail cleanly (503), never hang.
    const away = await api.submit(KEY.a, simpleBody(999));
    expect(away.status, await away.text()).toBe(503);
    await redis.restart();
    for (const id of ids) {
      const job = await api.until(KEY.a, id, (j) => j.status === 'queued', `job ${id} back after the restart`, 20_000);
      expect(job.id).toBe(id);
    }
    const worker = await startJobsProcess(redis.url);
    workers.push(worker);
    for (const [i, id] of ids.entries()) {
      const done = await api.until(KEY.a, id, finished, `job ${id} to finish`, 30_000);
      expect(done.status, done.error).toBe('succeeded');
      expect(done.result!.outputs.find((o) => o.name === 'OUTPUT0')!.data).toEqual(Array.from({ length: 16 }, (_, k) => k + 100 * i + 1));
    }
  });
});
