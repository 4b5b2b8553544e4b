/**
 * The gateway's raw HTTP/1.1 front door (`httpRawReader`, gateway/src/adapters/node-http/raw-infer-front.ts)
 * against the node:http one: two real gateways over one real node process (embedded mode, `simple` and the
 * `sleepy` model), one with the switch off and one with it on, receive the same bytes. Every answer (status,
 * headers, body; Date and Retry-After's value aside), the access log line and the request metric must be the
 * same: hit, miss, 401, 403, 404, 429, 400 (malformed JSON, bad binary header), a deadline, JSON and binary, a
 * sequence request. The raw gateway must really have served them (it still owns the connection afterwards).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequestBody } from '../../shared/src/kserve/index.js';
import { createLogger } from '../../shared/src/logging/index.js';
import { exchange } from '../../shared/src/http/raw-http1/test-helpers.js';
import { waitFor } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleBody, sleepyBody } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const KEY = { a: 'tsk_rawfront-a', b: 'tsk_rawfront-b', tiny: 'tsk_rawfront-tiny', slow: 'tsk_rawfront-slow' };

interface Side {
  readonly gateway: RunningGateway;
  readonly lines: string[];
}

let node: NodeProcess;
let plain: Side;
let raw: Side;

async function start(httpRawReader: boolean): Promise<Side> {
  const config = loadGatewayConfig(
    JSON.stringify({
      metrics: { requireAdminKey: false },
      maxBodyBytes: 64 * 1024,
      tiers: {
        // A bucket that never runs out and refills too slowly to gain a whole request during the test: RateLimit-Remaining
        // counts the requests sent, the same on both sides whatever the timing (at 1e6/s it depended on a millisecond turning).
        open: { priority: 1, queueTimeoutMs: 20_000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0.001, burst: 1e6, elementsPerSecond: 0, elementsBurst: 0 } },
        tiny: { priority: 3, queueTimeoutMs: 5000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0.001, burst: 2, elementsPerSecond: 0, elementsBurst: 0 } },
        slow: { priority: 2, queueTimeoutMs: 300, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0.001, burst: 1e6, elementsPerSecond: 0, elementsBurst: 0 } },
      },
      tenants: [
        { id: 'a', tier: 'open', keys: [{ id: 'a1', hash: await sha256Hex(KEY.a) }] },
        { id: 'b', tier: 'open', allowedModels: ['other'], keys: [{ id: 'b1', hash: await sha256Hex(KEY.b) }] },
        { id: 't', tier: 'tiny', keys: [{ id: 't1', hash: await sha256Hex(KEY.tiny) }] },
        { id: 's', tier: 'slow', keys: [{ id: 's1', hash: await sha256Hex(KEY.slow) }] },
      ],
      cache: { models: { simple: { enabled: true } } },
    }),
  );
  const lines: string[] = [];
  const gateway = await startGateway({
    config,
    redisUrl: null,
    nodes: [{ id: 'n1', grpc: node.grpcAddress, http: `127.0.0.1:${node.httpPort}` }],
    port: 0,
    host: '127.0.0.1',
    httpRawReader,
    logger: createLogger({ write: (line) => lines.push(line) }),
  });
  return { gateway, lines };
}

beforeAll(async () => {
  node = await startNodeProcess();
  plain = await start(false);
  raw = await start(true);
  for (const side of [plain, raw]) await waitFor(() => side.gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet', timeoutMs: 30_000 });
}, 60_000);

afterAll(async () => {
  await Promise.all([plain?.gateway.close({ graceMs: 500 }), raw?.gateway.close({ graceMs: 500 })]);
  await node?.stop();
});

let counter = 0;

/** A request as bytes, with a request id of its own so both gateways log and answer the same id. */
function request(path: string, headers: readonly string[], body: Uint8Array | string): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
  const head = [`POST ${path} HTTP/1.1`, 'Host: gateway', `x-request-id: conf-${++counter}`, ...headers, `Content-Length: ${bytes.byteLength}`, '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

/**
 * Retry-After, Age and RateLimit-Reset count seconds on each gateway's own clock (a second may turn between the two):
 * present on both, values aside.
 */
const comparable = (text: string): string => text.replace(/\r\n(Retry-After|Age|RateLimit-Reset): \d+/gi, '\r\n$1: n').replace(/\r\nDate: [^\r]*/g, '\r\nDate: -');

/** The access lines of `requestId`, without time and durations. */
function accessLines(side: Side, requestId: string): unknown[] {
  return side.lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.requestId === requestId)
    .map(({ time: _t, durationMs: _d, queueMs: _q, upstreamMs: _u, ...rest }) => rest);
}

async function requestMetrics(side: Side): Promise<string[]> {
  const text = await (await fetch(`${side.gateway.url}/metrics`)).text();
  return text.split('\n').filter((line) => /^tessera_gateway_requests_total\{/.test(line) && line.includes('route="infer"'));
}

/** Sends the same bytes to both gateways (each on a new connection) and checks answer, log line and metric. */
async function same(bytes: Buffer): Promise<string> {
  const requestId = /x-request-id: (conf-\d+)/.exec(bytes.toString('latin1'))![1]!;
  const want = await exchange(plain.gateway.port, [bytes]);
  const got = await exchange(raw.gateway.port, [bytes]);
  expect(comparable(got.text), requestId).toBe(comparable(want.text));
  expect(got.closed).toBe(want.closed);
  await waitFor(() => accessLines(raw, requestId).length > 0 && accessLines(plain, requestId).length > 0, { what: `the access lines of ${requestId}` });
  expect(accessLines(raw, requestId)).toEqual(accessLines(plain, requestId));
  return got.text;
}

const auth = (key: string): string => `Authorization: Bearer ${key}`;

describe('the raw front door answers, logs and counts exactly as node:http', () => {
  it('hit, miss, no-store, versioned path, binary in and out, a client id', async () => {
    const json = ['Content-Type: application/json', auth(KEY.a)];
    // The static fleet reports no versions: the first answer teaches the cache which version serves.
    expect(await same(request('/v2/models/simple/infer', json, simpleBody(0)))).toMatch(/\r\nx-cache: BYPASS\r\n/i);
    expect(await same(request('/v2/models/simple/infer', json, simpleBody(1, 'req-1')))).toMatch(/\r\nx-cache: MISS\r\n/i);
    expect(await same(request('/v2/models/simple/infer', json, simpleBody(1, 'req-2')))).toMatch(/\r\nx-cache: HIT\r\n/i);
    await same(request('/v2/models/simple/versions/1/infer?x=1', json, simpleBody(2)));
    await same(request('/v2/models/simple/infer', [...json, 'Cache-Control: no-store'], simpleBody(3)));
    const binary = encodeInferRequestBody(
      { id: 'bin', modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64).fill(1) }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64).fill(2) }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const binaryHeaders = Object.entries(binary.headers).map(([name, value]) => `${name}: ${value}`);
    const answer = await same(request('/v2/models/simple/infer', [auth(KEY.a), ...binaryHeaders], binary.body));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\ninference-header-content-length: \d+\r\n/i);
  });

  it('refusals: 401, 403, 404, 400, 429 with Retry-After, and a deadline passed upstream (504)', async () => {
    const body = simpleBody(5);
    expect(await same(request('/v2/models/simple/infer', [], body))).toMatch(/^HTTP\/1\.1 401 /);
    expect(await same(request('/v2/models/simple/infer', [auth('tsk_unknown')], body))).toMatch(/^HTTP\/1\.1 401 /);
    await same(request('/v2/models/simple/infer', [auth(KEY.a), `x-api-key: ${KEY.b}`], body));
    expect(await same(request('/v2/models/simple/infer', [auth(KEY.b)], body))).toMatch(/^HTTP\/1\.1 403 /);
    // Triton answers an unknown model 400; an unknown version of a known one is 404 here.
    expect(await same(request('/v2/models/missing/infer', [auth(KEY.a)], body))).toMatch(/^HTTP\/1\.1 400 /);
    expect(await same(request('/v2/models/simple/versions/9/infer', [auth(KEY.a)], body))).toMatch(/^HTTP\/1\.1 404 /);
    expect(await same(request('/v2/models/simple/infer', [auth(KEY.a)], '{"inputs": ['))).toMatch(/^HTTP\/1\.1 400 /);
    expect(await same(request('/v2/models/simple/infer', [auth(KEY.a), 'inference-header-content-length: 999'], body))).toMatch(/^HTTP\/1\.1 400 /);
    expect(await same(request('/v2/models/simple/infer', [auth(KEY.a), 'x-tessera-deadline-ms: soon'], body))).toMatch(/^HTTP\/1\.1 400 /);
    for (let i = 0; i < 2; i++) await same(request('/v2/models/simple/infer', [auth(KEY.tiny)], simpleBody(20 + i)));
    const limited = await same(request('/v2/models/simple/infer', [auth(KEY.tiny)], simpleBody(30)));
    expect(limited).toMatch(/^HTTP\/1\.1 429 [\s\S]*\r\nRetry-After: \d+\r\n/i);
    // The slow tier gives a request 300 ms; the sleepy model holds it 2 s: 504 once the upstream call is late. The node
    // has the same deadline, and whichever timer fires first, the answer reads the same (deadlineBeforeAnswer).
    expect(await same(request('/v2/models/sleepy/infer', [auth(KEY.slow)], sleepyBody(2000)))).toMatch(/^HTTP\/1\.1 504 /);
  }, 30_000);

  it('a sequence request, and the request metrics of everything sent so far', async () => {
    const sequence = JSON.stringify({ ...JSON.parse(simpleBody(7)), parameters: { sequence_id: 42, sequence_start: true } });
    await same(request('/v2/models/simple/infer', [auth(KEY.a)], sequence));
    expect(await requestMetrics(raw)).toEqual(await requestMetrics(plain));
    expect((await requestMetrics(raw)).length).toBeGreaterThan(3);
  });

  it('serves on the raw path, and keeps the connection: several requests on one, in order', async () => {
    const bytes = Buffer.concat([1, 2, 3].map((n) => request('/v2/models/simple/infer', [auth(KEY.a)], simpleBody(n))));
    const want = await exchange(plain.gateway.port, [bytes], { answers: 3 });
    // The earlier tests' connections are closed by their clients; the server may not have seen every close yet.
    await waitFor(() => raw.gateway.rawHttp1?.size === 0, { what: 'the earlier connections to close' });
    const socket = connect(raw.gateway.port, '127.0.0.1');
    try {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.write(bytes);
      await waitFor(() => (text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0) === 3 && text.length >= want.text.length, { what: 'three answers' });
      // Still the raw path's after three requests: node:http served none of them.
      expect(raw.gateway.rawHttp1?.size).toBe(1);
      expect(comparable(text)).toBe(comparable(want.text));
    } finally {
      socket.destroy();
    }
    expect(plain.gateway.rawHttp1).toBeUndefined();
  });
});
