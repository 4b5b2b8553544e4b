/**
 * The infer fast path on node:http (adapters/node-http/native-infer.ts) against the Hono app it
 * bypasses: identical gateways (in-process stores, an echoing dispatcher), one served by Hono only
 * (as @hono/node-server serves it), one by the fast path ahead of Hono, and one with the raw HTTP/1.1
 * reader ahead of both (raw-infer-front.ts, each request on a new connection so that it reaches the raw
 * reader first), receive the same requests over real HTTP. Status, headers, body, the request metric and
 * the log lines must be the same, for generated requests (keys, bodies, headers, paths) and for the ones
 * the fast paths hand to Hono.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { getRequestListener } from '@hono/node-server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCacheKey } from '../../shared/src/cache-key/index.js';
import { TesseraError } from '../../shared/src/errors/index.js';
import { createLogger } from '../../shared/src/logging/index.js';
import type { InferRequest } from '../../shared/src/tensors/index.js';
import { createMemoryResponseCache } from '../src/adapters/cache/index.js';
import { createStaticNodeDirectory } from '../src/adapters/fleet/index.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../src/adapters/memory/index.js';
import { createNativeInferListener, createRawInferHandler } from '../src/adapters/node-http/index.js';
import { attachRawHttp1 } from '../../shared/src/http/raw-http1/index.js';
import { loadGatewayConfig, type GatewayConfig } from '../src/config/index.js';
import { createGatewayApp, createInferCache, matchInferPath } from '../src/core/app/index.js';
import { seedTenants, sha256Hex } from '../src/core/auth/index.js';
import { createCacheLayer } from '../src/core/cache/index.js';
import { FakeModelDirectory, RecordingMetrics } from './app-fixtures.js';
import { createVersionChooser } from '../src/core/routing/index.js';

const KEY = { a: 'tsk_native-a', b: 'tsk_native-b', tiny: 'tsk_native-tiny' };
const MAX_BODY = 4096;

class EchoDispatcher extends FakeModelDirectory {
  async dispatch(request: InferRequest) {
    if (request.modelName !== 'simple') throw TesseraError.notFound(`Request for unknown model: '${request.modelName}' is not found`);
    return {
      response: { id: request.id, modelName: request.modelName, modelVersion: '1', outputs: request.inputs.map((t) => ({ ...t, name: `${t.name}_OUT` })) },
      computeUs: 10,
    };
  }
}

interface Served {
  readonly server: Server;
  readonly port: number;
  readonly metrics: RecordingMetrics;
  readonly lines: string[];
  /** Requests the fast path took (always 0 for the Hono-only server; the raw reader's for the raw one). */
  fast: number;
}

async function serve(config: GatewayConfig, mode: 'hono' | 'native' | 'raw'): Promise<Served> {
  const native = mode !== 'hono';
  const tenants = createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, 0);
  const lines: string[] = [];
  const logger = createLogger({ write: (line) => lines.push(line) });
  const directory = createStaticNodeDirectory([{ id: 'n1', grpcAddress: '127.0.0.1:1' }]);
  // A frozen clock: `Age` and entry ages must not depend on when each server got the request.
  const layer = createCacheLayer({ store: createMemoryResponseCache({ clock: { now: () => 1_000_000 } }), logger, clock: { now: () => 1_000_000 } });
  const metrics = new RecordingMetrics();
  const app = createGatewayApp({
    config,
    tenants,
    rateLimiter: createMemoryRateLimiter({ now: () => 1_000_000 }),
    dispatcher: new EchoDispatcher(),
    cache: createInferCache({ layer, settings: config.cache, versions: createVersionChooser({ directory, routing: config.routing }), computeKey: computeCacheKey }),
    metrics,
    logger,
  });
  const hono = getRequestListener(app.fetch);
  const fastPath = createNativeInferListener(app.serveInfer, logger);
  const served: Served = { server: createServer(), port: 0, metrics, lines, fast: 0 };
  served.server.on('request', (incoming, outgoing) => {
    if (native && fastPath(incoming, outgoing)) served.fast += mode === 'native' ? 1 : 0;
    else void hono(incoming, outgoing);
  });
  if (mode === 'raw') {
    const handler = createRawInferHandler(app.serveInfer, logger);
    attachRawHttp1(served.server, { accepts: (head) => handler.accepts(head), serve: (request, reply) => (served.fast++, handler.serve(request, reply)) }, config.maxBodyBytes);
  }
  await new Promise<void>((resolve) => served.server.listen(0, '127.0.0.1', resolve));
  return Object.assign(served, { port: (served.server.address() as AddressInfo).port });
}

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(port: number, method: string, path: string, headers: Record<string, string | string[]>, body: Uint8Array | undefined, via = agent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: via }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : Buffer.from(body));
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A request id the gateway generated (the client sent none it accepts) differs by nature. */
const sameId = (id: unknown): unknown => (typeof id === 'string' && UUID.test(id) ? '<generated>' : id);

/** What must match: the status, the body, and every header but Date. */
function comparable(reply: Reply): unknown {
  const { date: _date, ...headers } = reply.headers;
  return { status: reply.status, headers: { ...headers, 'x-request-id': sameId(headers['x-request-id']) }, body: reply.body.toString('latin1') };
}

/** A log line without its time and duration. */
function logFields(line: string): unknown {
  const { time: _time, durationMs: _duration, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return { ...rest, requestId: sameId(rest.requestId) };
}

let hono: Served;
let native: Served;
let raw: Served;

beforeAll(async () => {
  const config = loadGatewayConfig(
    JSON.stringify({
      maxBodyBytes: MAX_BODY,
      tiers: {
        open: { priority: 1, queueTimeoutMs: 5000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 1e6, burst: 1e6, elementsPerSecond: 0, elementsBurst: 0 } },
        tiny: { priority: 3, queueTimeoutMs: 1000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0.001, burst: 3, elementsPerSecond: 0, elementsBurst: 0 } },
      },
      tenants: [
        { id: 'a', tier: 'open', keys: [{ id: 'a1', hash: await sha256Hex(KEY.a) }] },
        { id: 'b', tier: 'open', allowedModels: ['other'], keys: [{ id: 'b1', hash: await sha256Hex(KEY.b) }] },
        { id: 't', tier: 'tiny', keys: [{ id: 't1', hash: await sha256Hex(KEY.tiny) }] },
      ],
      cache: { models: { '*': { enabled: true } } },
    }),
  );
  hono = await serve(config, 'hono');
  native = await serve(config, 'native');
  raw = await serve(config, 'raw');
});

afterAll(async () => {
  agent.destroy();
  for (const s of [hono, native, raw]) await new Promise((resolve) => s?.server.close(resolve));
});

const simpleBody = (offset: number, id?: string): Buffer =>
  Buffer.from(
    JSON.stringify({
      ...(id === undefined ? {} : { id }),
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: [offset, 1, 2, 3] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 4], data: [1, 1, 1, 1] },
      ],
    }),
  );

let sequence = 0;

/** Sends one request to both servers and checks they answered, counted and logged alike. */
async function same(method: string, path: string, headers: Record<string, string | string[]>, body: Uint8Array | undefined): Promise<Reply> {
  const id = { 'x-request-id': `parity-${++sequence}`, ...headers };
  const before = [hono.metrics.requests.length, native.metrics.requests.length, hono.lines.length, native.lines.length, raw.metrics.requests.length, raw.lines.length];
  const viaHono = await send(hono.port, method, path, id, body);
  const viaNative = await send(native.port, method, path, id, body);
  // A kept-alive connection of its own: the request is the first on it, so the raw reader sees it.
  const fresh = new Agent({ keepAlive: true, maxSockets: 1 });
  const viaRaw = await send(raw.port, method, path, id, body, fresh).finally(() => fresh.destroy());
  expect(comparable(viaNative), `${method} ${path} ${JSON.stringify(headers)}`).toEqual(comparable(viaHono));
  expect(comparable(viaRaw), `raw: ${method} ${path} ${JSON.stringify(headers)}`).toEqual(comparable(viaHono));
  const observed = (s: Served, from: number) => s.metrics.requests.slice(from).map(({ seconds: _seconds, ...o }) => o);
  expect(observed(native, before[1]!)).toEqual(observed(hono, before[0]!));
  expect(observed(raw, before[4]!)).toEqual(observed(hono, before[0]!));
  expect(native.lines.slice(before[3]).map(logFields)).toEqual(hono.lines.slice(before[2]).map(logFields));
  expect(raw.lines.slice(before[5]).map(logFields)).toEqual(hono.lines.slice(before[2]).map(logFields));
  return viaNative;
}

describe('the infer fast path answers exactly as the Hono app', () => {
  it('serves MISS then HIT, versioned paths, binary answers and a client request id', async () => {
    const fastBefore = native.fast;
    const rawBefore = raw.fast;
    const auth = { authorization: `Bearer ${KEY.a}` };
    // The static fleet reports no versions: the first answer teaches the cache which version serves.
    expect((await same('POST', '/v2/models/simple/infer', auth, simpleBody(0))).headers['x-cache']).toBe('BYPASS');
    expect((await same('POST', '/v2/models/simple/infer', auth, simpleBody(1, 'req-1'))).headers['x-cache']).toBe('MISS');
    const hit = await same('POST', '/v2/models/simple/infer', auth, simpleBody(1, 'req-2'));
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers.age).toBe('0');
    expect(JSON.parse(hit.body.toString()).id).toBe('req-2');
    await same('POST', '/v2/models/simple/versions/0001/infer?x=1', auth, simpleBody(2));
    await same('POST', '/v2/models/simple/infer', { ...auth, 'cache-control': 'no-store' }, simpleBody(3));
    const binary = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [5] }], parameters: { binary_data_output: true } }));
    await same('POST', '/v2/models/simple/infer', auth, binary);
    expect(native.fast - fastBefore).toBe(6);
    expect(raw.fast - rawBefore).toBe(6);
  });

  it('refuses alike: keys, models, bodies, limits, deadlines, raw binary', async () => {
    const fastBefore = native.fast;
    const rawBefore = raw.fast;
    await same('POST', '/v2/models/simple/infer', {}, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { authorization: 'Bearer tsk_unknown' }, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { authorization: 'Basic abc' }, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { authorization: `Bearer ${KEY.a}`, 'x-api-key': KEY.b }, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { authorization: `Bearer ${KEY.b}` }, simpleBody(1));
    await same('POST', '/v2/models/other/infer', { authorization: `Bearer ${KEY.b}` }, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a }, Buffer.from('{"inputs": ['));
    await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a }, Buffer.alloc(MAX_BODY + 1, 0x20));
    await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a, 'x-tessera-deadline-ms': 'soon' }, simpleBody(1));
    await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a, 'inference-header-content-length': '0' }, Buffer.alloc(16));
    await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a }, undefined);
    for (let i = 0; i < 5; i++) await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.tiny }, simpleBody(10 + i));
    expect(native.fast - fastBefore).toBe(16);
    // All but the body over the server's limit, which the raw reader leaves to node:http unread.
    expect(raw.fast - rawBefore).toBe(15);
    // The connection survived the refusals that left a body unread (401 before reading, 400 over the limit).
    expect((await same('POST', '/v2/models/simple/infer', { 'x-api-key': KEY.a }, simpleBody(1))).status).toBe(200);
  });

  it('leaves to Hono what it is unsure of, and Hono answers it', async () => {
    const fastBefore = native.fast;
    const rawBefore = raw.fast;
    const auth = { authorization: `Bearer ${KEY.a}` };
    await same('POST', '/v2/models/simple/infer', { ...auth, 'content-encoding': 'gzip' }, gzipSync(simpleBody(7)));
    await same('POST', '/v2/models/sim%70le/infer', auth, simpleBody(7));
    await same('POST', '/v2/models/simple/infer/', auth, simpleBody(7));
    await same('POST', '/v2/models/../infer', auth, simpleBody(7));
    await same('GET', '/v2/models/simple/infer', auth, undefined);
    await same('POST', '/v2/models/simple/infer', { authorization: [`Bearer ${KEY.a}`, `Bearer ${KEY.a}`] }, simpleBody(7));
    expect(native.fast - fastBefore).toBe(0);
    expect(raw.fast - rawBefore).toBe(0);
  });

  it('agrees on generated requests', async () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 20 });
    const json = fc.jsonValue({ maxDepth: 2 });
    const headersArb = fc.record(
      {
        authorization: fc.constantFrom(`Bearer ${KEY.a}`, `Bearer ${KEY.b}`, `Bearer ${KEY.tiny}`, 'Bearer nope', 'Token x'),
        'x-api-key': fc.constantFrom(KEY.a, KEY.b, ''),
        'cache-control': fc.constantFrom('no-store', 'no-cache', 'max-age=0', 'max-age=5'),
        'x-tessera-deadline-ms': fc.constantFrom('1000', '0', 'x', '99999999999'),
        'inference-header-content-length': fc.oneof(fc.constantFrom('0', '-1', 'x'), fc.integer({ min: 0, max: 300 }).map(String)),
        traceparent: fc.constant('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
        'x-request-id': printable,
      },
      { requiredKeys: [] },
    );
    const bodyArb = fc.oneof(
      fc.integer({ min: 0, max: 3 }).map((n) => simpleBody(n)),
      json.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      fc.constant(undefined),
    );
    const pathArb = fc.constantFrom('/v2/models/simple/infer', '/v2/models/simple/versions/1/infer', '/v2/models/other/infer', '/v2/models/x.y_z/infer');
    await fc.assert(
      fc.asyncProperty(pathArb, headersArb, bodyArb, async (path, headers, body) => {
        await same('POST', path, headers, body);
      }),
      { numRuns: 150 },
    );
  });
});

describe('matchInferPath', () => {
  it('takes plain infer URLs and leaves the rest to the router', () => {
    expect(matchInferPath('/v2/models/simple/infer')).toEqual({ model: 'simple', version: undefined, path: '/v2/models/simple/infer' });
    expect(matchInferPath('/v2/models/a.b-c_d/versions/007/infer?x=%20')).toEqual({ model: 'a.b-c_d', version: '7', path: '/v2/models/a.b-c_d/versions/007/infer' });
    for (const url of ['/v2/models/si%20mple/infer', '/v2/models/simple/infer/', '/v2/models/../infer', '/v2/models/./infer', '//v2/models/simple/infer',
      'http://host/v2/models/simple/infer', '/v2/models/simple/versions/x/infer', '/v2/models/simple/ready', '/v2/models/a\\b/infer', '/v2/models/simple/infer#f']) {
      expect(matchInferPath(url), url).toBeUndefined();
    }
  });
});
