/**
 * Tracing and logs across the two processes, all real: a node process (`bin/tessera-node.js
 * --otlp-endpoint`) and an in-process gateway (startGateway, static fleet, gRPC to the node), both
 * exporting OTLP/HTTP JSON to a loopback receiver (otlp-receiver.ts).
 *
 * - one request yields spans in both services sharing ONE trace id, continuing the client's
 *   `traceparent`, with the expected names and parent links:
 *     client → gateway.request → auth, rate_limit, cache → admission, upstream → node.infer → queue, compute
 * - without a `traceparent` the gateway starts the trace and the node still joins it;
 * - the gateway's log lines of a request carry its trace id, request id, tenant and model, and the
 *   API key never appears in any line (a recognizable key is sent and grepped for).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { createLogger } from '../../shared/src/logging/index.js';
import { createTracing, type TracingHandle } from '../../shared/src/tracing/otel-tracer.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const API_KEY = 'tsk_TRACE-LOG-TEST-DO-NOT-PRINT-7f3a9c';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

let receiver: OtlpReceiver;
let node: NodeProcess;
let gateway: RunningGateway;
let tracing: TracingHandle;
const logLines: string[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // The node batches spans; a short period lets the test see them without stopping the node.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
  node = await startNodeProcess(['--otlp-endpoint', receiver.url]);
  tracing = createTracing({ endpoint: receiver.url, serviceName: 'tessera-gateway', scheduledDelayMillis: 20 });
  const config = loadGatewayConfig(
    JSON.stringify({
      tenants: [{ id: 'acme', tier: 'premium', keys: [{ id: 'acme-1', hash: await sha256Hex(API_KEY) }] }],
      cache: { models: { '*': { enabled: true } } },
    }),
  );
  gateway = await startGateway({
    config,
    redisUrl: null,
    nodes: [{ id: 'n1', grpc: node.grpcAddress, http: null }],
    port: 0,
    host: '127.0.0.1',
    logger: createLogger({ write: (line) => logLines.push(line) }),
    tracer: tracing.tracer,
  });
});

afterAll(async () => {
  await gateway?.close({ graceMs: 1000 });
  await tracing?.shutdown();
  await node?.stop();
  await receiver?.close();
});

function inferBody(value: number): string {
  const data = new Array(16).fill(value);
  return JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ],
  });
}

async function infer(headers: Record<string, string>, value: number): Promise<Response> {
  const response = await fetch(`${gateway.url}/v2/models/simple/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: inferBody(value),
  });
  await response.arrayBuffer();
  return response;
}

const ofTrace = (traceId: string) => (spans: readonly ReceivedSpan[]) => spans.filter((s) => s.traceId === traceId);
const hasAll = (names: readonly string[]) => (spans: readonly ReceivedSpan[]) => names.every((n) => spans.some((s) => s.name === n));
const ALL = ['gateway.request', 'auth', 'rate_limit', 'cache', 'admission', 'upstream', 'node.infer', 'queue', 'compute'];

function one(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `exactly one '${name}' span`).toHaveLength(1);
  return found[0]!;
}

describe('one request through the gateway to a real node', () => {
  it('yields spans in both processes sharing the client trace id, with the expected parent links', async () => {
    const response = await infer({ authorization: `Bearer ${API_KEY}`, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }, 1);
    expect(response.status).toBe(200);
    await tracing.flush();
    await receiver.until((spans) => hasAll(ALL)(ofTrace(CLIENT_TRACE)(spans)), 'the spans of both processes');

    const spans = ofTrace(CLIENT_TRACE)(receiver.spans);
    const root = one(spans, 'gateway.request');
    const auth = one(spans, 'auth');
    const rateLimit = one(spans, 'rate_limit');
    const cache = one(spans, 'cache');
    const admission = one(spans, 'admission');
    const upstream = one(spans, 'upstream');
    const nodeInfer = one(spans, 'node.infer');
    const queue = one(spans, 'queue');
    const compute = one(spans, 'compute');

    expect(root.parentSpanId).toBe(CLIENT_SPAN);
    for (const child of [auth, rateLimit, cache]) expect(child.parentSpanId, child.name).toBe(root.spanId);
    for (const child of [admission, upstream]) expect(child.parentSpanId, child.name).toBe(cache.spanId);
    expect(nodeInfer.parentSpanId).toBe(upstream.spanId);
    for (const child of [queue, compute]) expect(child.parentSpanId, child.name).toBe(nodeInfer.spanId);

    for (const s of [root, auth, rateLimit, cache, admission, upstream]) expect(s.service, s.name).toBe('tessera-gateway');
    for (const s of [nodeInfer, queue, compute]) expect(s.service, s.name).toBe('tessera-node');

    expect(root.attributes).toMatchObject({ 'tessera.tenant': 'acme', 'tessera.model': 'simple', 'http.response.status_code': 200 });
    expect(auth.attributes).toMatchObject({ 'tessera.tenant': 'acme', 'tessera.tier': 'premium' });
    expect(upstream.attributes).toMatchObject({ 'tessera.node_id': 'n1', 'tessera.attempt': 1, 'tessera.model': 'simple' });
    expect(nodeInfer.attributes).toMatchObject({ 'tessera.model': 'simple', 'tessera.model_version': '1', 'tessera.batch_size': 1 });
    expect(compute.attributes).toMatchObject({ 'tessera.model': 'simple', 'tessera.batch_size': 1 });
    // queue then compute, inside node.infer (explicit times from the scheduler's timings)
    expect(queue.endNs <= compute.startNs + 1000n).toBe(true);
    expect(queue.startNs >= nodeInfer.startNs - 1_000_000n).toBe(true);
    for (const s of spans) expect(s.statusCode, s.name).not.toBe(2);
    // nothing of the API key in any attribute
    expect(JSON.stringify(receiver.spans, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(API_KEY);
    expect(receiver.rejected).toEqual([]);
  });

  it('starts a trace at the gateway when the client sends none; the node joins it', async () => {
    const response = await infer({ 'x-api-key': API_KEY, 'x-request-id': 'no-parent-1' }, 2);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('no-parent-1');
    await tracing.flush();
    const rootOf = (spans: readonly ReceivedSpan[]) =>
      spans.find((s) => s.name === 'gateway.request' && s.attributes['tessera.request_id'] === 'no-parent-1');
    await receiver.until((spans) => {
      const root = rootOf(spans);
      return root !== undefined && hasAll(['node.infer', 'compute'])(ofTrace(root.traceId)(spans));
    }, 'the node spans of a gateway-started trace');
    const root = rootOf(receiver.spans)!;
    expect(root.parentSpanId).toBe('');
    expect(root.traceId).not.toBe(CLIENT_TRACE);
    const nodeInfer = one(ofTrace(root.traceId)(receiver.spans), 'node.infer');
    expect(nodeInfer.service).toBe('tessera-node');
  });
});

describe('request logs', () => {
  it('carry trace id, request id, tenant and model, and never the API key', async () => {
    const traceparent = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    expect((await infer({ authorization: `Bearer ${API_KEY}`, traceparent, 'x-request-id': 'log-req-1' }, 3)).status).toBe(200);
    // A wrong key that contains the real one, and the real key in the other header form: refused, not logged.
    expect((await infer({ authorization: `Bearer ${API_KEY}-wrong`, 'x-request-id': 'log-req-2' }, 3)).status).toBe(401);
    expect((await infer({ 'x-api-key': API_KEY, 'x-request-id': 'log-req-3' }, 4)).status).toBe(200);

    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const first = entries.filter((e) => e.requestId === 'log-req-1');
    expect(first.length).toBeGreaterThan(0);
    for (const entry of first) {
      expect(entry).toMatchObject({ traceId: '1'.repeat(32), requestId: 'log-req-1', tenant: 'acme', model: 'simple' });
    }
    expect(first.find((e) => e.msg === 'request')).toMatchObject({ status: 200, route: 'infer', path: '/v2/models/simple/infer' });
    // The refused request is logged too (with its own fresh trace id), but has no tenant.
    const refused = entries.find((e) => e.requestId === 'log-req-2' && e.msg === 'request');
    expect(refused).toMatchObject({ status: 401, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(refused).not.toHaveProperty('tenant');
    expect(entries.find((e) => e.requestId === 'log-req-3' && e.msg === 'request')).toMatchObject({ tenant: 'acme', model: 'simple' });

    expect(logLines.join('')).not.toContain(API_KEY);
    expect(logLines.join('')).not.toContain('TRACE-LOG-TEST');
  });
});

describe('the --otlp-endpoint flags', () => {
  it('are parsed by both command lines, the node falling back to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const { parseGatewayArgs } = await import('../../gateway/src/cli/cli-options.js');
    const { parseNodeArgs } = await import('../../gpu-node/src/cli/node-options.js');
    expect(parseGatewayArgs(['--otlp-endpoint', 'http://c:4318']).otlpEndpoint).toBe('http://c:4318');
    expect(parseGatewayArgs([]).otlpEndpoint).toBeUndefined();
    const node = (argv: string[], env: Record<string, string>) => {
      const parsed = parseNodeArgs(['--model-repository', '/m', ...argv], env);
      return parsed.kind === 'options' ? parsed.options.otlpEndpoint : parsed.kind;
    };
    expect(node(['--otlp-endpoint', 'http://a:4318'], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318' })).toBe('http://a:4318');
    expect(node([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318' })).toBe('http://b:4318');
    expect(node([], {})).toBeUndefined();
  });
});
