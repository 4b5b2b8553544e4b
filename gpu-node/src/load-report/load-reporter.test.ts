/**
 * The reporter against a real redis-server: fast cadence (intervalMs 50) so that tests are short,
 * but every assertion waits for a condition with a bounded wait, never for a duration.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fleetKeys, parseFleetEvent, parseLoadReport } from '../../../shared/src/fleet/index.js';
import type { FleetEvent, LoadReport } from '../../../shared/src/fleet/index.js';
import { createLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor } from '../../../shared/test/support/index.js';
import type { RedisServer } from '../../../shared/test/support/index.js';
import { createLoadReporter } from './load-reporter.js';
import type { LoadReporter, LoadReporterOptions } from './load-reporter.js';
import type { ModelLoadSnapshot } from './periodic-reporter.js';

const keys = fleetKeys();
let server: RedisServer;
let client: Redis;
const reporters: LoadReporter[] = [];
let nextId = 0;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on('error', () => {});
});

afterEach(async () => {
  await Promise.all(reporters.splice(0).map((reporter) => reporter.stop()));
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

const models: ModelLoadSnapshot[] = [
  { name: 'resnet50', versions: ['1'], queued: 2, inflight: 4, capacity: 8, execTimeEmaMs: 3.25 },
  { name: 'loading', versions: [], queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null },
];

function reporter(overrides: Partial<LoadReporterOptions> = {}): LoadReporter {
  const created = createLoadReporter({
    redisUrl: server.url,
    nodeId: `node-${++nextId}`,
    httpAddress: '127.0.0.1:8000',
    grpcAddress: '127.0.0.1:8001',
    intervalMs: 50,
    ttlMs: 1000,
    maxBackoffMs: 100,
    source: () => models,
    ...overrides,
  });
  reporters.push(created);
  return created;
}

async function readReport(key: string): Promise<LoadReport | undefined> {
  const json = await client.get(key);
  return json === null ? undefined : parseLoadReport(json);
}

/** A second connection subscribed to the events channel, collecting parsed events. */
async function subscribe(): Promise<{ events: FleetEvent[]; close: () => void }> {
  const subscriber = new Redis(server.url, { retryStrategy: () => 50 });
  subscriber.on('error', () => {});
  const events: FleetEvent[] = [];
  subscriber.on('message', (_channel: string, message: string) => events.push(parseFleetEvent(message)));
  await subscriber.subscribe(keys.eventsChannel);
  return { events, close: () => subscriber.disconnect() };
}

describe('load reporter', () => {
  it('writes a well-formed report with a TTL, and seq increases', async () => {
    const r = reporter({ nodeId: 'gpu-a' });
    r.start();
    const first = await waitFor(() => readReport(keys.nodeKey('gpu-a')), { what: 'the first report' });
    expect(first).toMatchObject({
      version: 1,
      nodeId: 'gpu-a',
      httpAddress: '127.0.0.1:8000',
      grpcAddress: '127.0.0.1:8001',
      ttlMs: 1000,
      draining: false,
      // only models with READY versions are reported
      models: [models[0]],
    });
    const ttl = await client.pttl(keys.nodeKey('gpu-a'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
    const later = await waitFor(async () => {
      const report = await readReport(keys.nodeKey('gpu-a'));
      return report !== undefined && report.seq > first.seq ? report : undefined;
    }, { what: 'a later report' });
    expect(later.startedAt).toBe(first.startedAt);
    expect(later.sentAt).toBeGreaterThanOrEqual(first.sentAt);
    expect(r.connected).toBe(true);
  });

  it('publishes join with the report, then leave, and deregistering deletes the key', async () => {
    const sub = await subscribe();
    try {
      const r = reporter({ nodeId: 'gpu-b' });
      r.start();
      const join = await waitFor(() => sub.events.find((e) => e.type === 'join' && e.nodeId === 'gpu-b'), { what: 'join' });
      expect(join.type === 'join' && join.report.models).toEqual([models[0]]);
      await waitFor(() => readReport(keys.nodeKey('gpu-b')), { what: 'the key' });
      await r.stop({ deregister: true });
      expect(await client.exists(keys.nodeKey('gpu-b'))).toBe(0);
      const leave = await waitFor(() => sub.events.find((e) => e.type === 'leave' && e.nodeId === 'gpu-b'), { what: 'leave' });
      expect(leave).toMatchObject({ type: 'leave', deregistered: true, startedAt: join.startedAt });
      // one join only while Redis stayed up
      expect(sub.events.filter((e) => e.type === 'join' && e.nodeId === 'gpu-b')).toHaveLength(1);
    } finally {
      sub.close();
    }
  });

  it('lets the key expire when it stops without deregistering', async () => {
    const r = reporter({ nodeId: 'gpu-c', ttlMs: 300 });
    r.start();
    await waitFor(() => readReport(keys.nodeKey('gpu-c')), { what: 'the key' });
    await r.stop({ deregister: false });
    expect(await client.exists(keys.nodeKey('gpu-c'))).toBe(1);
    await waitFor(async () => (await client.exists(keys.nodeKey('gpu-c'))) === 0, { what: 'the key to expire' });
  });

  it('reports the draining flag at once', async () => {
    const r = reporter({ nodeId: 'gpu-d' });
    r.start();
    await waitFor(() => readReport(keys.nodeKey('gpu-d')), { what: 'the key' });
    r.setDraining(true);
    await waitFor(async () => (await readReport(keys.nodeKey('gpu-d')))?.draining, { what: 'draining: true' });
  });

  it('keeps going through a bad snapshot, counting it as a failure', async () => {
    let bad = true;
    const r = reporter({
      nodeId: 'gpu-e',
      source: () => (bad ? [{ ...models[0]!, queued: -1 }] : models),
    });
    r.start();
    await waitFor(() => r.failures >= 2, { what: 'failed reports' });
    expect(await client.exists(keys.nodeKey('gpu-e'))).toBe(0);
    bad = false;
    await waitFor(() => readReport(keys.nodeKey('gpu-e')), { what: 'a report once the snapshot is good' });
  });

  it('survives Redis being killed and restarted: connected flips false then true, one log per outage', async () => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line) as { level: string; msg: string }) });
    const r = reporter({ nodeId: 'gpu-f', logger });
    r.start();
    await waitFor(() => r.connected, { what: 'connected' });
    expect(r.failures).toBe(0);

    const seqBeforeOutage = r.seq;
    await server.kill();
    await waitFor(() => !r.connected, { what: 'connected to flip to false' });
    const failuresAtOutage = r.failures;
    await waitFor(() => r.failures >= failuresAtOutage + 5, { what: 'several failed reports while Redis is down' });
    const warnings = lines.filter((l) => l.level === 'warn' && /failing/.test(l.msg));
    expect(warnings).toHaveLength(1);

    await server.restart();
    await waitFor(() => r.connected, { what: 'connected to flip back to true' });
    // the restarted Redis is empty (no persistence): the reporter writes its key again
    const report = await waitFor(() => readReport(keys.nodeKey('gpu-f')), { what: 'the key after the restart' });
    expect(report.seq).toBeGreaterThan(seqBeforeOutage);
    expect(lines.filter((l) => l.level === 'info' && /resumed/.test(l.msg))).toHaveLength(1);
    expect(lines.filter((l) => l.level === 'warn' && /failing/.test(l.msg))).toHaveLength(1);
  });

  it('rejoins after an outage with a join event', async () => {
    const sub = await subscribe();
    try {
      const r = reporter({ nodeId: 'gpu-g' });
      r.start();
      await waitFor(() => sub.events.some((e) => e.type === 'join' && e.nodeId === 'gpu-g'), { what: 'the first join' });
      // An outage seen by the reporter while the subscriber stays connected (Redis refuses writes),
      // so that the second join cannot be missed as it could across a restart.
      await client.config('SET', 'maxmemory', '1');
      await client.config('SET', 'maxmemory-policy', 'noeviction');
      try {
        await waitFor(() => !r.connected, { what: 'writes refused' });
      } finally {
        await client.config('SET', 'maxmemory', '0');
      }
      await waitFor(() => sub.events.filter((e) => e.type === 'join' && e.nodeId === 'gpu-g').length >= 2, { what: 'a second join' });
      await waitFor(() => r.connected, { what: 'connected again' });
    } finally {
      sub.close();
    }
  });

  it('starts while Redis is down and registers once it comes up, never throwing', async () => {
    const down = await startRedisServer();
    await down.stop();
    const r = reporter({ redisUrl: down.url, nodeId: 'gpu-h' });
    r.start();
    await waitFor(() => r.failures >= 2, { what: 'failed reports' });
    expect(r.connected).toBe(false);
    expect(await r.reportNow()).toBe(false);
    await down.restart();
    const direct = new Redis(down.url);
    try {
      await waitFor(async () => (await direct.exists(keys.nodeKey('gpu-h'))) === 1, { what: 'the key' });
      // the key can be seen before the reporter has processed the reply to its SET
      await waitFor(() => r.connected, { what: 'connected' });
    } finally {
      direct.disconnect();
      await r.stop();
      await down.stop();
    }
  });

  it('refuses inconsistent options', () => {
    expect(() => reporter({ intervalMs: 1000, ttlMs: 1000 })).toThrow(/intervalMs < ttlMs/);
    expect(() => reporter({ nodeId: 'bad id' })).toThrow(/invalid node id/);
  });
});
