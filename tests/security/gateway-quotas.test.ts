/**
 * Attack 6 (issue 14): limits that count elements but not bytes. Real redis-server, a real node
 * process and a real gateway with the DEFAULT free tier (1 MiB largest request, 1 MiB/s with a 2 MiB
 * burst, jobs of at most 256 KiB, 10 stored jobs per tenant, results kept an hour). No job worker
 * runs, so every accepted job stays stored: what a free tenant can make Redis hold is then exactly
 * what its quota lets it, and the test measures it (MEMORY USAGE of every key, before and after).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleBody } from '../../gateway/test/support/test-node-requests.js';
import { DEFAULT_TIERS, loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const KEY = { jobs: 'tsk_sec-quota-jobs', rate: 'tsk_sec-quota-rate' };
const FREE = DEFAULT_TIERS.free;

/** A `simple` request padded with leading JSON whitespace to `bytes` bytes (valid JSON, 32 elements). */
const padded = (bytes: number, offset = 0): string => {
  const body = simpleBody(offset);
  return ' '.repeat(Math.max(0, bytes - body.length)) + body;
};

/** One BYTES element of `bytes` bytes: the review's 16 MB job. */
const oneHugeElement = (bytes: number): string =>
  JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1], data: ['x'.repeat(bytes)] }] });

async function storedBytes(redis: Redis): Promise<number> {
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) total += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  } while (cursor !== '0');
  return total;
}

describe('bytes, not only elements (redis + node + gateway, default free tier)', () => {
  let redis: RedisServer;
  let client: Redis;
  let node: NodeProcess;
  let gateway: RunningGateway;

  const post = (path: string, key: string, body: string) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-quota-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        tenants: [
          { id: 'free-jobs', tier: 'free', keys: [{ id: 'fj', hash: await sha256Hex(KEY.jobs) }] },
          { id: 'free-rate', tier: 'free', keys: [{ id: 'fr', hash: await sha256Hex(KEY.rate) }] },
        ],
      }),
    );
    // Queue only: accepted jobs stay in Redis.
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  });

  afterAll(async () => {
    client?.disconnect();
    await gateway?.close({ graceMs: 500 });
    await node?.stop();
    await redis?.stop();
  });

  it('the default free tier limits bytes', () => {
    expect(FREE.maxRequestBytes).toBe(1024 * 1024);
    expect(FREE.rateLimits).toMatchObject({ bytesPerSecond: 1024 * 1024, bytesBurst: 2 * 1024 * 1024 });
    expect(FREE.jobs).toEqual({ maxPayloadBytes: 256 * 1024, maxStoredJobs: 10, resultTtlSeconds: 3600 });
  });

  it('one 16 MB BYTES element: 413 with a message, as an infer and as a job, and Redis does not grow', async () => {
    const before = await storedBytes(client);
    for (const path of ['/v2/models/simple/infer', '/v1/jobs?model=simple']) {
      const res = await post(path, KEY.jobs, oneHugeElement(16 * 1024 * 1024));
      expect(res.status, path).toBe(413);
      expect(((await res.json()) as { error: string }).error).toBe(
        "the request body is larger than 1048576 bytes, the largest request tier 'free' accepts",
      );
    }
    // Under the request size but over the job payload size: 413 too, naming the job limit.
    const job = await post('/v1/jobs?model=simple', KEY.jobs, padded(300 * 1024));
    expect(job.status).toBe(413);
    expect(((await job.json()) as { error: string }).error).toBe(`the job body is ${300 * 1024} bytes; tier 'free' accepts jobs of at most 262144 bytes`);
    expect(await storedBytes(client)).toBeLessThan(before + 64 * 1024);
  });

  it('bytes per second: a burst of bodies past 2 MiB gets 429 with Retry-After, the request count far from its limit', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 4 && refused === undefined; i++) {
      const res = await post('/v2/models/simple/infer', KEY.rate, padded(900 * 1024, i));
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(refused?.status).toBe(429);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused!.json()) as { error: string }).error).toMatch(/^byte rate limit exceeded for tenant 'free-rate' \(tier 'free': 1048576 bytes\/s\); retry in \d+ s$/);
  });

  it('stored jobs: the 11th job is refused (429), and a flood cannot grow Redis past the tenant’s quota', async () => {
    const before = await storedBytes(client);
    const accepted: string[] = [];
    for (let i = 0; i < FREE.jobs!.maxStoredJobs; i++) {
      // Paced under the tier's request rate (5/s): this case is about the stored-jobs quota, and ten posts
      // back to back could meet the rate limit first (seen once in CI on a fast machine).
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      const res = await post('/v1/jobs?model=simple', KEY.jobs, padded(150 * 1024, i));
      expect(res.status, await res.clone().text()).toBe(202);
      accepted.push(((await res.json()) as { id: string }).id);
    }
    // Past the request-rate burst (5/s, 10) too: wait for request tokens, so the quota is what refuses.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const eleventh = await post('/v1/jobs?model=simple', KEY.jobs, padded(1024, 99));
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('retry-after')).not.toBeNull();
    expect(((await eleventh.json()) as { error: string }).error).toMatch(/^tenant 'free-jobs' already has 10 stored jobs, the most tier 'free' keeps/);

    // The flood of the review, and more: every submission is refused, nothing more is stored.
    for (let i = 0; i < 20; i++) {
      const res = await post('/v1/jobs?model=simple', KEY.jobs, i % 2 === 0 ? padded(250 * 1024, 100 + i) : oneHugeElement(16 * 1024 * 1024));
      expect([413, 429]).toContain(res.status);
      await res.arrayBuffer();
    }
    const grown = (await storedBytes(client)) - before;
    // The quota: 10 jobs, each body at most 256 KiB (stored base64: 4/3) plus BullMQ's bookkeeping.
    const quota = FREE.jobs!.maxStoredJobs * (Math.ceil((FREE.jobs!.maxPayloadBytes * 4) / 3) + 8 * 1024);
    expect(grown).toBeGreaterThan(10 * 150 * 1024); // the ten accepted jobs really are stored
    expect(grown).toBeLessThan(quota);
    // Kept no longer than the tier's result TTL.
    const pttl = await client.pttl('tessera:{jobs}:stored:' + encodeURIComponent((await storedScope(client))!));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(FREE.jobs!.resultTtlSeconds * 1000);
    expect(accepted).toHaveLength(10);
  });
});

/** The free-jobs tenant's scope as the ledger names it (id~generation). */
async function storedScope(redis: Redis): Promise<string | undefined> {
  const keys = await redis.keys('tessera:{jobs}:stored:*');
  const key = keys.find((k) => decodeURIComponent(k.slice('tessera:{jobs}:stored:'.length)).startsWith('free-jobs'));
  return key === undefined ? undefined : decodeURIComponent(key.slice('tessera:{jobs}:stored:'.length));
}
