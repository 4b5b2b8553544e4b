/**
 * Fixtures of the async-job suites: a real redis-server, a real node process (`simple` and `sleepy`,
 * publishing load reports), the gateway on loopback, and `bin/tessera-jobs.js` as a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../shared/test/support/index.js';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import type { RunningGateway } from '../../src/entry-node.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const KEY = { a: 'tsk_jobs-tenant-a', b: 'tsk_jobs-tenant-b', premium: 'tsk_jobs-premium', quick: 'tsk_jobs-quick', admin: 'jobs-admin-key' };

export interface JobJson {
  id: string;
  status: string;
  model: string;
  tier: string;
  attempts: number;
  error?: string;
  result?: { outputs: { name: string; data: number[] }[] };
  result_url?: string;
}

/** JSON text of the config (also written to a file for tessera-jobs). */
export async function jobsConfigText(): Promise<string> {
  return JSON.stringify({
    adminKeyHash: await sha256Hex(KEY.admin),
    // The suites' webhook receiver listens on loopback over http: an internal receiver, allowed explicitly.
    webhooks: { allowHttp: true, allow: ['127.0.0.1/32'] },
    tiers: {
      premium: { queueTimeoutMs: 60_000 },
      // A tier whose queue timeout is far shorter than the work ahead of it: spill-over material.
      quick: { priority: 2, queueTimeoutMs: 200, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
        rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } },
    },
    tenants: [
      { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
      { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEY.b) }] },
      { id: 'tp', tier: 'premium', keys: [{ id: 'tp1', hash: await sha256Hex(KEY.premium) }] },
      { id: 'tq', tier: 'quick', keys: [{ id: 'tq1', hash: await sha256Hex(KEY.quick) }] },
    ],
  });
}

export async function jobsConfig(): Promise<GatewayConfig> {
  return loadGatewayConfig(await jobsConfigText());
}

// The test node's request bodies, re-exported for the job suites.
export { simpleBody, sleepyBody } from '../support/test-node-requests.js';

export function client(gateway: RunningGateway) {
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  return {
    submit: (key: string, body: string, query = 'model=simple', headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/v1/jobs?${query}`, { method: 'POST', body, headers: { ...auth(key), 'content-type': 'application/json', ...headers } }),
    get: (key: string, path: string) => fetch(`${gateway.url}${path}`, { headers: auth(key) }),
    del: (key: string, path: string) => fetch(`${gateway.url}${path}`, { method: 'DELETE', headers: auth(key) }),
    infer: (key: string, body: string, model = 'simple', headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/v2/models/${model}/infer`, { method: 'POST', body, headers: { ...auth(key), ...headers } }),
    /** Polls the job until `done(job)`. */
    async until(key: string, id: string, done: (job: JobJson) => boolean, what: string, timeoutMs = 20_000): Promise<JobJson> {
      return waitFor(async () => {
        const job = (await (await fetch(`${gateway.url}/v1/jobs/${id}`, { headers: auth(key) })).json()) as JobJson;
        return done(job) ? job : undefined;
      }, { what, timeoutMs, intervalMs: 50 });
    },
  };
}

export const finished = (job: JobJson): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.status);

export interface JobsProcess {
  readonly process: ChildProcess;
  /** SIGTERM and wait for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL: the crash of a worker. */
  kill(): Promise<void>;
}

/** `node bin/tessera-jobs.js --config FILE` with REDIS_URL; resolves once it logged "tessera-jobs started". */
export async function startJobsProcess(redisUrl: string, env: Record<string, string> = {}): Promise<JobsProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-jobs-'));
  const configPath = join(dir, 'gateway.json');
  await writeFile(configPath, await jobsConfigText());
  const child = spawn(process.execPath, [join(ROOT, 'bin/tessera-jobs.js'), '--config', configPath, '--concurrency', '2'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redisUrl, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      if (log.includes('"tessera-jobs started"')) {
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`tessera-jobs exited with ${code} before starting:\n${log.slice(-4000)}`)));
  });
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(sig);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  return { process: child, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
}
