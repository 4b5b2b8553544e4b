/**
 * A real node in-process (startNode, ports 0, onnxruntime and typescript backends) with a real
 * redis-server: load reports, deregistration on stop, metrics that agree with the statistics
 * extension, the deadline header, a node that keeps serving when Redis is unreachable, and the HTTP
 * report pusher to a loopback receiver (an edge stand-in).
 * Every wait is for a condition (bounded), never for a duration.
 */
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEADLINE_HEADER, fleetKeys, parseLoadReport } from '../../../shared/src/fleet/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor } from '../../../shared/test/support/index.js';
import type { RedisServer } from '../../../shared/test/support/index.js';
import { writeExampleRepository } from '../example-models/index.js';
import { parseNodeArgs, type NodeOptions } from './node-options.js';
import { startNode, type RunningNode } from './start-node.js';

const WAIT = { timeoutMs: 20_000 };

function options(repository: string, extra: readonly string[] = []): NodeOptions {
  const args = ['--model-repository', repository, '--http-port', '0', '--http-address', '127.0.0.1'];
  args.push('--metrics-port', '0', '--metrics-address', '127.0.0.1', '--allow-grpc', 'false', '--exit-timeout-secs', '10');
  const parsed = parseNodeArgs([...args, ...extra]);
  if (parsed.kind !== 'options') throw new Error(`bad test options: ${JSON.stringify(parsed)}`);
  return parsed.options;
}

async function metricsText(node: RunningNode): Promise<string> {
  return (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
}

/** The value of one series line, e.g. value(text, 'nv_inference_count{model="a",version="1"}'). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function simpleInfer(node: RunningNode, seed: number): Promise<Response> {
  const data = Array.from({ length: 16 }, (_, i) => seed + i);
  const body = {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ],
  };
  return fetch(`http://127.0.0.1:${node.httpPort}/v2/models/simple/infer`, { method: 'POST', body: JSON.stringify(body) });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a node with load reports in Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  let dir: string;
  let node: RunningNode;

  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    dir = await mkdtemp(join(tmpdir(), 'tessera-start-node-'));
    await writeExampleRepository(dir, { only: ['simple'] });
    await appendFile(join(dir, 'simple', 'config.pbtxt'), '\ndynamic_batching { max_queue_delay_microseconds: 2000 }\n');
    node = await startNode(
      options(dir, ['--redis-url', redis.url, '--node-id', 'node-under-test', '--advertise-host', '127.0.0.1']),
      silentLogger,
    );
  });

  afterAll(async () => {
    await node?.stop();
    client?.disconnect();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports the model with its capacity and execution-time EMA; metrics and statistics agree', async () => {
    const key = fleetKeys().nodeKey('node-under-test');
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => simpleInfer(node, i)));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));

    const config = node.core.modelConfig('simple');
    const instances = config.instanceGroup.reduce((sum, g) => sum + Math.max(1, g.count), 0);
    const report = await waitFor(async () => {
      const json = await client.get(key);
      const parsed = json === null ? undefined : parseLoadReport(json);
      const simple = parsed?.models[0];
      // A report built after the traffic: the EMA is set and nothing is waiting or running.
      return simple?.execTimeEmaMs == null || simple.queued + simple.inflight > 0 ? undefined : parsed;
    }, WAIT);
    expect(report.httpAddress).toBe(`127.0.0.1:${node.httpPort}`);
    expect(report.grpcAddress).toBeNull();
    expect(report.draining).toBe(false);
    expect(report.models).toEqual([
      { name: 'simple', versions: ['1'], queued: 0, inflight: 0, capacity: instances * 8, execTimeEmaMs: expect.any(Number) },
    ]);

    // The batch-size histogram is the statistics extension's batch_stats, bucketed.
    const stats = (await (await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/simple/stats`)).json()) as {
      model_stats: { execution_count: number; batch_stats: { batch_size: number; compute_infer: { count: number } }[] }[];
    };
    const [model] = stats.model_stats;
    const batches = model?.batch_stats ?? [];
    expect(batches.reduce((n, b) => n + b.batch_size * b.compute_infer.count, 0)).toBe(24);
    const text = await metricsText(node);
    const labels = 'model="simple",version="1"';
    for (const le of [1, 2, 4, 8, 16, 32, 64, 128]) {
      const expected = batches.filter((b) => b.batch_size <= le).reduce((n, b) => n + b.compute_infer.count, 0);
      expect(value(text, `tessera_inference_batch_size_bucket{${labels},le="${le}"}`)).toBe(expected);
    }
    expect(value(text, `tessera_inference_batch_size_count{${labels}}`)).toBe(model?.execution_count);
    expect(value(text, `nv_inference_exec_count{${labels}}`)).toBe(model?.execution_count);
    expect(value(text, `tessera_inference_batch_size_sum{${labels}}`)).toBe(24);
    expect(value(text, `nv_inference_pending_request_count{${labels}}`)).toBe(0);
    expect(value(text, 'tessera_node_load_report_connected')).toBe(1);
  });

  it('stop() (the SIGTERM path) deregisters the node', async () => {
    const key = fleetKeys().nodeKey('node-under-test');
    expect(await client.exists(key)).toBe(1);
    await node.stop();
    expect(await client.exists(key)).toBe(0);
  });
});

describe('a node whose Redis is unreachable', () => {
  it('serves anyway and says so in its metrics', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-start-node-'));
    await writeExampleRepository(dir, { only: ['simple'] });
    const node = await startNode(options(dir, ['--redis-url', `redis://127.0.0.1:${await closedPort()}`]), silentLogger);
    try {
      expect((await simpleInfer(node, 1)).status).toBe(200);
      await waitFor(() => (node.loadReporter?.failures ?? 0) > 0 || undefined, WAIT);
      expect(value(await metricsText(node), 'tessera_node_load_report_connected')).toBe(0);
      expect(value(await metricsText(node), 'tessera_node_load_report_failures_total')).toBeGreaterThan(0);
    } finally {
      await node.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a node pushing load reports to an edge over HTTP (--report-url)', () => {
  it('posts its reports with the fleet token, leaves on stop, and serves while the receiver is down', async () => {
    const posts: { path: string; authorization: string | undefined; body: string }[] = [];
    const receiver = createHttpServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        posts.push({ path: request.url ?? '', authorization: request.headers.authorization, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const edge = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    const dir = await mkdtemp(join(tmpdir(), 'tessera-start-node-'));
    await writeExampleRepository(dir, { only: ['simple'] });
    const node = await startNode(
      options(dir, ['--report-url', `${edge}/admin/fleet/report`, '--report-token', 'tok', '--node-id', 'edge-node', '--advertise-host', '127.0.0.1']),
      silentLogger,
    );
    let stopped = false;
    try {
      expect(node.loadReporter).toBeUndefined();
      const reports = () => posts.filter((post) => post.path === '/admin/fleet/report').map((post) => parseLoadReport(post.body));
      const report = await waitFor(() => reports().find((r) => r.models.some((m) => m.name === 'simple')), WAIT);
      expect(report).toMatchObject({ nodeId: 'edge-node', httpAddress: `127.0.0.1:${node.httpPort}`, grpcAddress: null, draining: false });
      expect(posts.every((post) => post.authorization === 'Bearer tok')).toBe(true);

      // The receiver goes away: the node keeps serving.
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      const failures = node.reportPusher?.failures ?? 0;
      await waitFor(() => (node.reportPusher?.failures ?? 0) > failures || undefined, WAIT);
      expect((await simpleInfer(node, 3)).status).toBe(200);

      // Back up on the same port: stop() posts the leave.
      await new Promise<void>((resolve) => receiver.listen(Number(new URL(edge).port), '127.0.0.1', resolve));
      await waitFor(() => node.reportPusher?.connected, WAIT);
      stopped = true;
      await node.stop();
      const leave = posts.find((post) => post.path === '/admin/fleet/leave');
      expect(leave && JSON.parse(leave.body)).toEqual({ nodeId: 'edge-node', startedAt: report.startedAt });
      expect(reports().some((r) => r.draining)).toBe(true);
    } finally {
      if (!stopped) await node.stop();
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A typescript-backend model that records each execution in `executed.log` and then blocks until a
 * `release` file appears, so the test decides when executions end (one instance, one request each).
 */
const BLOCKING_MODEL = `
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
let dir;
export function initialize(args) { dir = args.parameters.control_dir; }
export async function execute(requests) {
  appendFileSync(join(dir, 'executed.log'), requests.map((r) => r.inputs.INPUT0.data[0]).join(',') + '\\n');
  while (!existsSync(join(dir, 'release'))) await new Promise((resolve) => setTimeout(resolve, 5));
  return requests.map((r) => ({ outputs: { OUTPUT0: r.inputs.INPUT0 } }));
}
`;

function blockingConfig(controlDir: string): string {
  return `name: "blocking"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 rate_limiter { resources [ { name: "R" count: 1 } ] } } ]
dynamic_batching { }
parameters { key: "control_dir" value: { string_value: "${controlDir}" } }
`;
}

describe('the deadline header', () => {
  let dir: string;
  let control: string;
  let node: RunningNode;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-deadline-'));
    // Outside the repository, where a folder would be taken for a model.
    control = await mkdtemp(join(tmpdir(), 'tessera-deadline-control-'));
    await mkdir(join(dir, 'blocking', '1'), { recursive: true });
    await writeFile(join(dir, 'blocking', 'config.pbtxt'), blockingConfig(control));
    await writeFile(join(dir, 'blocking', '1', 'model.js'), BLOCKING_MODEL);
    await writeFile(join(dir, 'blocking', '1', 'package.json'), JSON.stringify({ type: 'module' }));
    // Through the rate limiter too: the gate must not change what a deadline does.
    node = await startNode(options(dir, ['--rate-limit', 'execution_count']), silentLogger);
  });

  afterAll(async () => {
    await writeFile(join(control, 'release'), '').catch(() => undefined);
    await node?.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(control, { recursive: true, force: true });
  });

  const infer = (tag: number, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${node.httpPort}/v2/models/blocking/infer`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [tag] }] }),
    });
  const executed = async () => (await readFile(join(control, 'executed.log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);

  it('refuses a malformed value with 400 naming the header', async () => {
    for (const bad of ['-1', '1.5', 'soon', '']) {
      const response = await infer(9, { [DEADLINE_HEADER]: bad });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(DEADLINE_HEADER);
    }
  });

  it('drops a request whose deadline passes in the queue: 504, never executed, counted CANCELED', async () => {
    const first = infer(1);
    await waitFor(async () => ((await executed()).length === 1 ? true : undefined), WAIT);
    // The one instance is busy until we release it, so this one can only wait in the queue.
    const late = await infer(2, { [DEADLINE_HEADER]: '50' });
    expect(late.status).toBe(504);
    expect(((await late.json()) as { error: string }).error).toContain('deadline');

    await writeFile(join(control, 'release'), '');
    expect((await first).status).toBe(200);
    expect((await infer(3, { [DEADLINE_HEADER]: '60000' })).status).toBe(200);
    expect(await executed()).toEqual(['1', '3']);

    const text = await metricsText(node);
    const labels = 'model="blocking",version="1"';
    expect(value(text, `nv_inference_request_failure{${labels},reason="CANCELED"}`)).toBe(1);
    expect(value(text, `nv_inference_request_success{${labels}}`)).toBe(2);
    expect(value(text, `nv_inference_pending_request_count{${labels}}`)).toBe(0);
    const [stats] = node.core.statistics('blocking');
    expect(stats?.inference_stats.fail.count).toBe(1);
  });
});
