import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_EVENT_VERSION, LOAD_REPORT_VERSION, fleetKeys } from '../../../../shared/src/fleet/index.js';
import type { LoadReport } from '../../../../shared/src/fleet/index.js';
import type { LogFields, Logger } from '../../../../shared/src/logging/index.js';
import { startRedisServer, waitFor } from '../../../../shared/test/support/index.js';
import type { RedisServer } from '../../../../shared/test/support/index.js';
import { connectRedis } from '../../entry-node.js';
import { createRedisNodeDirectory } from './redis-node-directory.js';
import type { RedisNodeDirectory } from './redis-node-directory.js';

const keys = fleetKeys();
let redis: RedisServer;
let client: Redis;
let directory: RedisNodeDirectory | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
  client = new Redis(redis.url);
});

afterEach(async () => {
  await directory?.close();
  directory = undefined;
  await client.flushall();
});

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

function report(nodeId: string, overrides: Partial<LoadReport> = {}): LoadReport {
  return {
    version: LOAD_REPORT_VERSION,
    nodeId,
    httpAddress: null,
    grpcAddress: '127.0.0.1:8001',
    startedAt: 1000,
    sentAt: Date.now(),
    seq: 1,
    ttlMs: 60_000,
    models: [{ name: 'simple', versions: ['1'], queued: 2, inflight: 1, capacity: 8, execTimeEmaMs: 3 }],
    draining: false,
    ...overrides,
  };
}

function recordingLogger(): Logger & { lines: { msg: string; fields?: LogFields }[] } {
  const lines: { msg: string; fields?: LogFields }[] = [];
  const logger: Logger & { lines: typeof lines } = {
    lines,
    info: (msg, fields) => lines.push({ msg, ...(fields ? { fields } : {}) }),
    warn: (msg, fields) => lines.push({ msg, ...(fields ? { fields } : {}) }),
    error: (msg, fields) => lines.push({ msg, ...(fields ? { fields } : {}) }),
    verbose: () => {},
    child: () => logger,
  };
  return logger;
}

const ids = (d: RedisNodeDirectory, model = 'simple', version?: string) => d.candidates(model, version).map((n) => n.id);

describe('createRedisNodeDirectory', () => {
  it('reads the nodes registered before it started, with their figures', async () => {
    await client.set(keys.nodeKey('gpu-1'), JSON.stringify(report('gpu-1')), 'PX', 60_000);
    await client.set(keys.nodeKey('gpu-2'), JSON.stringify(report('gpu-2', { models: [] })), 'PX', 60_000);
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 60_000 });
    expect(ids(directory)).toEqual(['gpu-1']);
    expect(ids(directory, 'simple', '2')).toEqual([]);
    expect(directory.all().map((n) => n.id).sort()).toEqual(['gpu-1', 'gpu-2']);
    const view = directory.candidates('simple')[0]!;
    expect(view.models.get('simple')).toMatchObject({ queued: 2, inflight: 1, capacity: 8, execTimeEmaMs: 3 });
    expect(view.grpcAddress).toBe('127.0.0.1:8001');
  });

  it('adds a node on its join event and drops it on its leave event, even while its key lingers', async () => {
    directory = await createRedisNodeDirectory({ redis: client, refreshMs: 60_000 });
    const changes: string[] = [];
    directory.onChange((c) => changes.push(`${c.type}:${c.nodeId}`));
    const joined = report('gpu-3');
    await client.set(keys.nodeKey('gpu-3'), JSON.stringify(joined), 'PX', 60_000);
    const base = { version: FLEET_EVENT_VERSION, nodeId: 'gpu-3', startedAt: joined.startedAt, sentAt: Date.now() };
    await client.publish(keys.eventsChannel, JSON.stringify({ ...base, type: 'join', report: joined }));
    await waitFor(() => ids(directory!).includes('gpu-3'), { what: 'the join to be applied' });
    await client.publish(keys.eventsChannel, JSON.stringify({ ...base, type: 'leave', deregistered: false }));
    await waitFor(() => directory!.all().length === 0, { what: 'the leave to be applied' });
    // The key is still there; a scan must not resurrect that process...
    await directory.refresh();
    expect(ids(directory)).toEqual([]);
    // ...but the same node id, restarted, is welcome.
    await client.set(keys.nodeKey('gpu-3'), JSON.stringify(report('gpu-3', { startedAt: 2000 })), 'PX', 60_000);
    await directory.refresh();
    expect(ids(directory)).toEqual(['gpu-3']);
    expect(changes).toEqual(['join:gpu-3', 'leave:gpu-3', 'join:gpu-3']);
  });

  it("subscribes to fleet events through the gateway's own client (lazyConnect, no offline queue)", async () => {
    const logger = recordingLogger();
    const gatewayClient = await connectRedis(redis.url, logger);
    try {
      directory = await createRedisNodeDirectory({ redis: gatewayClient, refreshMs: 60_000, logger });
      const channels = (await client.pubsub('CHANNELS')) as string[];
      expect(channels).toContain(keys.eventsChannel);
      expect(logger.lines.map((l) => l.msg).join('\n')).not.toMatch(/cannot subscribe|not subscribed/);
      const joined = report('gpu-7');
      await client.publish(keys.eventsChannel, JSON.stringify({ version: FLEET_EVENT_VERSION, nodeId: 'gpu-7', startedAt: 1000, sentAt: Date.now(), type: 'join', report: joined }));
      await waitFor(() => ids(directory!).includes('gpu-7'), { what: 'the join event (no scan runs within the test)' });
    } finally {
      await directory?.close();
      directory = undefined;
      gatewayClient.disconnect();
    }
  });

  it('subscribes once Redis comes up when it was down at start', async () => {
    const logger = recordingLogger();
    const url = redis.url;
    await redis.stop();
    try {
      directory = await createRedisNodeDirectory({ redis: url, refreshMs: 60_000, logger });
      expect(logger.lines.map((l) => l.msg)).toContainEqual(expect.stringMatching(/not subscribed to fleet events yet/));
    } finally {
      await redis.restart();
    }
    const probe = new Redis(url);
    try {
      await waitFor(async () => ((await probe.pubsub('CHANNELS')) as string[]).includes(keys.eventsChannel), {
        timeoutMs: 15_000,
        what: 'the directory to subscribe after Redis came up',
      });
    } finally {
      probe.disconnect();
    }
  });

  it('forgets a node whose key expired, and one whose report went stale', async () => {
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 20 });
    await client.set(keys.nodeKey('gpu-4'), JSON.stringify(report('gpu-4')), 'PX', 300);
    await waitFor(() => ids(directory!).includes('gpu-4'), { what: 'the scan to find gpu-4' });
    await waitFor(() => directory!.all().length === 0, { what: 'the expiry of gpu-4' });
    // A key that stays but whose report is older than its ttlMs no longer counts.
    await client.set(keys.nodeKey('gpu-5'), JSON.stringify(report('gpu-5', { sentAt: Date.now() - 10_000, ttlMs: 3000 })), 'PX', 60_000);
    await directory.refresh();
    expect(directory.all().map((n) => n.id)).toEqual(['gpu-5']);
    expect(ids(directory)).toEqual([]);
  });

  it('keeps routing on the last fleet it saw while Redis is unreachable, and resumes when it is back', async () => {
    // A short report TTL: without the freeze, gpu-9 would leave the pick set 300 ms into the outage.
    await client.set(keys.nodeKey('gpu-9'), JSON.stringify(report('gpu-9', { ttlMs: 300 })), 'PX', 60_000);
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 20 });
    expect(ids(directory)).toEqual(['gpu-9']);
    await redis.kill();
    await directory.refresh(); // fails: the view freezes at the last successful read
    const outageStarted = Date.now();
    await waitFor(() => Date.now() - outageStarted > 600, { what: 'twice the report TTL to pass' });
    await directory.refresh();
    expect(ids(directory)).toEqual(['gpu-9']);
    await redis.restart();
    // Back: the restarted Redis is empty, so the next successful scan drops the node whose key is gone.
    await waitFor(() => ids(directory!).length === 0, { what: 'a scan of the restarted Redis' });
  });

  it('applies only newer reports, and reads later figures on the next scan', async () => {
    await client.set(keys.nodeKey('gpu-6'), JSON.stringify(report('gpu-6', { seq: 5 })), 'PX', 60_000);
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 60_000 });
    const node = directory.candidates('simple')[0]!;
    const release = directory.track('gpu-6');
    expect(node.localInflight).toBe(1);
    release();
    release();
    expect(node.localInflight).toBe(0);
    await client.set(keys.nodeKey('gpu-6'), JSON.stringify(report('gpu-6', { seq: 4, draining: true })), 'PX', 60_000);
    await directory.refresh();
    expect(ids(directory)).toEqual(['gpu-6']);
    await client.set(keys.nodeKey('gpu-6'), JSON.stringify(report('gpu-6', { seq: 6, draining: true })), 'PX', 60_000);
    await directory.refresh();
    expect(ids(directory)).toEqual([]);
    // Trailing metadata refresh the figures between reports.
    directory.observe('gpu-6', 'simple', { queued: 7, inflight: 8 });
    expect(directory.all()[0]!.models.get('simple')).toMatchObject({ queued: 7, inflight: 8 });
  });

  it('ignores a malformed report with one log line, and keeps the good ones', async () => {
    const logger = recordingLogger();
    await client.set(keys.nodeKey('gpu-7'), '{"version":1,"nodeId":"gpu-7"}', 'PX', 60_000);
    await client.set(keys.nodeKey('gpu-8'), JSON.stringify(report('gpu-8')), 'PX', 60_000);
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 60_000, logger });
    await directory.refresh();
    expect(ids(directory)).toEqual(['gpu-8']);
    const warnings = logger.lines.filter((l) => l.msg === 'malformed load report ignored');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ key: keys.nodeKey('gpu-7'), error: expect.stringMatching(/^malformed load report: /) });
    await client.publish(keys.eventsChannel, 'not json');
    await waitFor(() => logger.lines.some((l) => l.msg === 'malformed fleet event ignored'), { what: 'the bad event to be logged' });
  });

  it('between full scans reads the known nodes\' keys alone, and still sees new figures, expiries and missed joins', async () => {
    // A client of our own whose SCAN and MGET calls are counted (the directory sends its commands on it).
    const counted = new Redis(redis.url);
    const calls = { scan: 0, mget: 0 };
    const scan = counted.scan.bind(counted) as (...args: unknown[]) => Promise<[string, string[]]>;
    const mget = counted.mget.bind(counted) as (...args: unknown[]) => Promise<(string | null)[]>;
    Object.assign(counted, {
      scan: (...args: unknown[]) => (calls.scan++, scan(...args)),
      mget: (...args: unknown[]) => (calls.mget++, mget(...args)),
    });
    try {
      await client.set(keys.nodeKey('gpu-10'), JSON.stringify(report('gpu-10', { seq: 1 })), 'PX', 60_000);
      directory = await createRedisNodeDirectory({ redis: counted, refreshMs: 20, fullScanEvery: 5 });
      // New figures arrive through the periodic reads.
      await client.set(keys.nodeKey('gpu-10'), JSON.stringify(report('gpu-10', { seq: 2, models: [{ name: 'simple', versions: ['1'], queued: 9, inflight: 1, capacity: 8, execTimeEmaMs: 3 }] })), 'PX', 60_000);
      await waitFor(() => directory!.all()[0]?.models.get('simple')?.queued === 9, { what: 'the new figures of gpu-10' });
      await waitFor(() => calls.mget >= 16, { what: 'sixteen periodic reads' });
      // One full scan (SCAN then MGET) in five periodic refreshes, plus the one at start: a scan every
      // time would make as many SCANs as MGETs.
      expect(calls.scan).toBeLessThan(calls.mget / 2);
      // A key that went away without a leave event: the next read drops the node.
      await client.del(keys.nodeKey('gpu-10'));
      await waitFor(() => directory!.all().length === 0, { what: 'gpu-10 to leave' });
      // A node whose join event was missed (its key written, nothing published): found by a full scan.
      await client.set(keys.nodeKey('gpu-11'), JSON.stringify(report('gpu-11')), 'PX', 60_000);
      await waitFor(() => ids(directory!).includes('gpu-11'), { what: 'a full scan to find gpu-11' });
    } finally {
      await directory?.close();
      directory = undefined;
      counted.disconnect();
    }
  });
});
