/**
 * The Hono app's infer route (what Workers and `app.fetch` serve) is an adapter over DirectInfer
 * (core/app/hono-infer-route.ts): two identical gateways, one asked through `fetch` with Web Requests,
 * one through `serveInfer` directly, must give the same status, headers, body bytes, request metric and
 * access line, on answers and on refusals of every layer. No sockets: this is the Workers contract.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/src/logging/index.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../src/adapters/memory/index.js';
import { createGatewayApp, matchInferPath, type DirectInferRequest, type GatewayApp } from '../src/core/app/index.js';
import { seedTenants } from '../src/core/auth/index.js';
import { answerToResponse, readBodyLimited } from '../src/core/http/index.js';
import { FakeDispatcher, KEYS, RecordingMetrics, simpleInferBody, testConfig } from './app-fixtures.js';

interface Side {
  readonly gateway: GatewayApp;
  readonly metrics: RecordingMetrics;
  readonly lines: string[];
}

async function side(): Promise<Side> {
  const config = await testConfig();
  const tenants = createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, 0);
  const metrics = new RecordingMetrics();
  const lines: string[] = [];
  const gateway = createGatewayApp({
    config,
    tenants,
    rateLimiter: createMemoryRateLimiter({ now: () => 1_000_000 }),
    dispatcher: new FakeDispatcher(),
    metrics,
    logger: createLogger({ write: (line) => lines.push(line) }),
    now: () => 1_000_000,
  });
  return { gateway, metrics, lines };
}

interface Seen {
  status: number;
  headers: [string, string][];
  body: number[];
}

async function seen(response: Response): Promise<Seen> {
  return { status: response.status, headers: [...response.headers], body: [...new Uint8Array(await response.arrayBuffer())] };
}

/** serveInfer's answer as the Hono adapter writes it: through a Web Response, so both compare alike. */
async function direct(gateway: GatewayApp, request: Request): Promise<Seen> {
  const target = matchInferPath(new URL(request.url).pathname)!;
  const input: DirectInferRequest = {
    path: target.path,
    headers: request.headers,
    readBody: (maxBytes) => readBodyLimited(request, maxBytes),
    signal: request.signal,
  };
  const answer = await gateway.serveInfer(input, target.model, target.version);
  return seen(answerToResponse(answer));
}

/** Log lines without the time (the logger stamps its own clock). */
const logFields = (line: string): Record<string, unknown> => {
  const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return rest;
};

function post(path: string, body: string, headers: Record<string, string>): () => Request {
  return () => new Request(`http://gw${path}`, { method: 'POST', body, headers });
}

describe('the Hono infer route is DirectInfer behind an adapter', () => {
  it('answers, counts and logs exactly as serveInfer, on success and on every refusal', async () => {
    const [hono, plain] = await Promise.all([side(), side()]);
    const key = (k: string, id: string) => ({ authorization: `Bearer ${k}`, 'x-request-id': id });
    const cases: [string, () => Request][] = [
      ['ok', post('/v2/models/simple/infer', simpleInferBody('r1'), key(KEYS.a, 'id-1'))],
      ['versioned, leading zeros', post('/v2/models/simple/versions/007/infer', simpleInferBody(), key(KEYS.a, 'id-2'))],
      ['no key', post('/v2/models/simple/infer', simpleInferBody(), { 'x-request-id': 'id-3' })],
      ['unknown key', post('/v2/models/simple/infer', simpleInferBody(), key('tsk_nope', 'id-4'))],
      ['model not allowed', post('/v2/models/simple/infer', simpleInferBody(), key(KEYS.b, 'id-5'))],
      ['bad JSON', post('/v2/models/simple/infer', '{"inputs": [', key(KEYS.a, 'id-6'))],
      ['raw binary', post('/v2/models/simple/infer', '', { ...key(KEYS.a, 'id-7'), 'inference-header-content-length': '0' })],
      ['unknown model', post('/v2/models/nope/infer', simpleInferBody(), key(KEYS.a, 'id-8'))],
      ['within the burst', post('/v2/models/simple/infer', simpleInferBody(), key(KEYS.free, 'id-9'))],
      ['within the burst again', post('/v2/models/simple/infer', simpleInferBody(), key(KEYS.free, 'id-10'))],
      ['rate limited', post('/v2/models/simple/infer', simpleInferBody(), key(KEYS.free, 'id-11'))],
    ];
    const statuses: number[] = [];
    for (const [name, make] of cases) {
      const viaHono = await seen(await hono.gateway.fetch(make()));
      const viaDirect = await direct(plain.gateway, make());
      expect(viaHono, name).toEqual(viaDirect);
      statuses.push(viaHono.status);
    }
    // The cases reach every layer: answers, auth, the model check, decoding, routing and the limit.
    expect(statuses).toEqual([200, 200, 401, 401, 403, 400, 501, 404, 200, 200, 429]);
    expect(hono.metrics.requests).toEqual(plain.metrics.requests);
    expect(hono.metrics.auth).toEqual(plain.metrics.auth);
    expect(hono.lines.map(logFields)).toEqual(plain.lines.map(logFields));
    expect(hono.lines).toHaveLength(cases.length);
  });

  it('still answers other methods on the infer path through the middlewares: 401 without a key, then 405', async () => {
    const { gateway, metrics } = await side();
    expect((await gateway.fetch(new Request('http://gw/v2/models/simple/infer'))).status).toBe(401);
    const response = await gateway.fetch(new Request('http://gw/v2/models/simple/infer', { headers: { authorization: `Bearer ${KEYS.a}` } }));
    expect(response.status).toBe(405);
    expect(response.headers.get('x-request-id')).not.toBeNull();
    expect(metrics.requests.map((r) => r.status)).toEqual([401, 405]);
  });
});
