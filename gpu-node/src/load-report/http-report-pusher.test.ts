/**
 * The HTTP pusher against a loopback receiver that records every POST (path, token, body): fast
 * cadence (intervalMs 50) so tests are short; every assertion waits for a condition with a bounded
 * wait, never for a duration.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLoadReport } from '../../../shared/src/fleet/index.js';
import { createLogger } from '../../../shared/src/logging/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { createHttpReportPusher, fleetPushUrls } from './http-report-pusher.js';
import type { HttpReportPusher, HttpReportPusherOptions } from './http-report-pusher.js';
import type { ModelLoadSnapshot } from './periodic-reporter.js';

interface Post {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
  readonly at: number;
}

interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly posts: Post[];
  /** The answer to the next posts; default 204. `hang` never answers. */
  status: number | 'hang';
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const pushers: HttpReportPusher[] = [];

afterEach(async () => {
  await Promise.all(pushers.splice(0).map((pusher) => pusher.stop({ deregister: false })));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function startReceiver(port = 0): Promise<Receiver> {
  const posts: Post[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: { status: number | 'hang' } = { status: 204 };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts.push({
        path: request.url ?? '',
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      if (receiver.status === 'hang') hanging.push(response);
      else response.writeHead(receiver.status).end(receiver.status === 204 ? undefined : '{"error":"nope"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const result: Receiver = {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    posts,
    get status() {
      return receiver.status;
    },
    set status(value) {
      receiver.status = value;
    },
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  receivers.push(result);
  return result;
}

const models: ModelLoadSnapshot[] = [
  { name: 'resnet50', versions: ['1'], queued: 2, inflight: 4, capacity: 8, execTimeEmaMs: 3.25 },
  { name: 'loading', versions: [], queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null },
];

function pusher(reportUrl: string, overrides: Partial<HttpReportPusherOptions> = {}): HttpReportPusher {
  const created = createHttpReportPusher({
    reportUrl,
    token: 'fleet-secret',
    nodeId: 'gpu-a',
    httpAddress: '127.0.0.1:8000',
    grpcAddress: null,
    intervalMs: 50,
    ttlMs: 1000,
    maxBackoffMs: 200,
    requestTimeoutMs: 200,
    source: () => models,
    startedAt: 1_700_000_000_000,
    ...overrides,
  });
  pushers.push(created);
  return created;
}

function reportsOf(receiver: Receiver) {
  return receiver.posts.filter((post) => post.path === '/admin/fleet/report').map((post) => parseLoadReport(post.body));
}

type Line = { level: string; msg: string; error?: string };

function captureLogs(): { lines: Line[]; logger: ReturnType<typeof createLogger> } {
  const lines: Line[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Line) }) };
}

describe('fleetPushUrls', () => {
  it('takes the report URL or the edge base URL, and refuses anything else', () => {
    expect(fleetPushUrls('https://edge.example/admin/fleet/report')).toEqual({
      report: 'https://edge.example/admin/fleet/report',
      leave: 'https://edge.example/admin/fleet/leave',
    });
    expect(fleetPushUrls('https://edge.example')).toEqual({
      report: 'https://edge.example/admin/fleet/report',
      leave: 'https://edge.example/admin/fleet/leave',
    });
    expect(fleetPushUrls('http://127.0.0.1:8787/prefix/')).toEqual({
      report: 'http://127.0.0.1:8787/prefix/admin/fleet/report',
      leave: 'http://127.0.0.1:8787/prefix/admin/fleet/leave',
    });
    expect(() => fleetPushUrls('redis://edge')).toThrow(/http\(s\) URL/);
    expect(() => fleetPushUrls('not a url')).toThrow(/http\(s\) URL/);
    expect(() => fleetPushUrls('https://user:pw@edge.example')).toThrow(/credentials/);
  });
});

describe('the HTTP report pusher', () => {
  it('posts valid reports with the fleet token and increasing seq, and posts the leave on stop', async () => {
    const receiver = await startReceiver();
    // A generous timeout: on a busy machine a 200 ms one can expire on a receiver that is only slow.
    const p = pusher(`${receiver.url}/admin/fleet/report`, { requestTimeoutMs: 5000 });
    p.start();
    await waitFor(() => reportsOf(receiver).length >= 3, { what: 'three reports' });
    expect(p.connected).toBe(true);
    expect(p.failures).toBe(0);
    const posts = receiver.posts.filter((post) => post.path === '/admin/fleet/report');
    for (const post of posts) {
      expect(post.authorization).toBe('Bearer fleet-secret');
      expect(post.contentType).toBe('application/json');
    }
    const reports = reportsOf(receiver);
    expect(reports[0]).toMatchObject({
      version: 1,
      nodeId: 'gpu-a',
      httpAddress: '127.0.0.1:8000',
      grpcAddress: null,
      startedAt: 1_700_000_000_000,
      ttlMs: 1000,
      draining: false,
      // Models with no READY version are left out, as in Redis.
      models: [models[0]],
    });
    const seqs = reports.map((report) => report.seq);
    expect(seqs[0]).toBe(1);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);

    p.setDraining(true);
    await waitFor(() => reportsOf(receiver).some((report) => report.draining), { what: 'a draining report' });

    await p.stop();
    const leaves = receiver.posts.filter((post) => post.path === '/admin/fleet/leave');
    expect(leaves).toHaveLength(1);
    expect(leaves[0]!.authorization).toBe('Bearer fleet-secret');
    expect(JSON.parse(leaves[0]!.body)).toEqual({ nodeId: 'gpu-a', startedAt: 1_700_000_000_000 });
    expect(p.connected).toBe(false);
    // Nothing more after stop.
    const count = receiver.posts.length;
    expect(await p.reportNow()).toBe(false);
    expect(receiver.posts.length).toBe(count);
  });

  it('appends the edge paths to a base URL', async () => {
    const receiver = await startReceiver();
    const p = pusher(receiver.url);
    p.start();
    await waitFor(() => reportsOf(receiver).length >= 1, { what: 'a report' });
    await p.stop();
    expect(receiver.posts.map((post) => post.path)).toContain('/admin/fleet/leave');
  });

  it('survives a receiver that is down, logs the outage once, backs off, and resumes when it comes back', async () => {
    const probe = await startReceiver();
    const port = probe.port;
    await probe.close();
    receivers.splice(receivers.indexOf(probe), 1);
    const { lines, logger } = captureLogs();
    const p = pusher(`http://127.0.0.1:${port}/admin/fleet/report`, { logger });
    p.start();
    await waitFor(() => p.failures >= 4, { what: 'four failed reports' });
    expect(p.connected).toBe(false);
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/failing/);

    const receiver = await startReceiver(port);
    await waitFor(() => p.connected, { what: 'reports resumed' });
    expect(reportsOf(receiver).length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.msg === 'load report pushes resumed')).toHaveLength(1);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });

  it('counts refusals (401) and timeouts as failures, with a capped backoff between attempts', async () => {
    const receiver = await startReceiver();
    receiver.status = 401;
    const { lines, logger } = captureLogs();
    const p = pusher(`${receiver.url}/admin/fleet/report`, { logger });
    p.start();
    await waitFor(() => receiver.posts.length >= 5, { what: 'five attempts' });
    expect(p.connected).toBe(false);
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.error).toMatch(/HTTP 401/);
    // Delays 50, 100, 200, 200 ms after the 1st..4th failure: attempts spread out, never closer than the interval.
    const at = receiver.posts.map((post) => post.at);
    expect(at[4]! - at[3]!).toBeGreaterThanOrEqual(150);

    receiver.status = 'hang';
    const before = p.failures;
    await waitFor(() => p.failures > before + 1, { what: 'timed-out reports' });
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);

    // A stop while the receiver hangs still returns (the leave times out too) and never rejects.
    await p.stop();
  });

  it('refuses bad options', () => {
    expect(() => pusher('http://127.0.0.1:1', { token: '' })).toThrow(/token/);
    expect(() => pusher('http://127.0.0.1:1', { intervalMs: 1000, ttlMs: 1000 })).toThrow(/intervalMs < ttlMs/);
    expect(() => pusher('http://127.0.0.1:1', { nodeId: 'bad id!' })).toThrow();
  });
});
