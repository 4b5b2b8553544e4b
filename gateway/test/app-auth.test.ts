import { describe, expect, it, vi } from 'vitest';
import { KEYS, simpleInferBody, testGateway } from './app-fixtures.js';

const base = 'http://gw';

function req(path: string, init: RequestInit & { key?: string } = {}): Request {
  const headers = new Headers(init.headers);
  if (init.key !== undefined) headers.set('authorization', `Bearer ${init.key}`);
  return new Request(`${base}${path}`, { ...init, headers });
}

const infer = (key: string | undefined, model = 'simple', body = simpleInferBody()) =>
  req(`/v2/models/${model}/infer`, { method: 'POST', body, ...(key === undefined ? {} : { key }) });

describe('gateway auth', () => {
  it('answers 401 with Triton-style JSON for a missing, malformed or unknown key', async () => {
    const { gateway, metrics, dispatcher } = await testGateway();
    const missing = await gateway.fetch(infer(undefined));
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await missing.json()).toEqual({ error: expect.stringContaining('missing API key') });

    const malformed = await gateway.fetch(req('/v2/models/simple/infer', { method: 'POST', headers: { authorization: 'Basic abc' } }));
    expect(malformed.status).toBe(401);
    expect(((await malformed.json()) as { error: string }).error).toMatch(/malformed/);

    const unknown = await gateway.fetch(infer('tsk_nope'));
    expect(unknown.status).toBe(401);
    const body = await unknown.text();
    expect(body).not.toContain('tsk_nope');

    expect(metrics.auth).toEqual(['missing', 'malformed', 'unknown_key']);
    expect(dispatcher.calls).toHaveLength(0);
  });

  it('accepts the key in x-api-key too, and refuses two different keys', async () => {
    const { gateway } = await testGateway();
    const ok = await gateway.fetch(req('/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), headers: { 'x-api-key': KEYS.a } }));
    expect(ok.status).toBe(200);
    const both = await gateway.fetch(req('/v2', { headers: { 'x-api-key': KEYS.a, authorization: `Bearer ${KEYS.b}` } }));
    expect(both.status).toBe(401);
  });

  it('refuses a revoked key with 401', async () => {
    const { gateway, tenants } = await testGateway();
    expect((await gateway.fetch(req('/v2', { key: KEYS.a }))).status).toBe(200);
    expect(await tenants.revokeKey('a1')).toBe(true);
    expect((await gateway.fetch(req('/v2', { key: KEYS.a }))).status).toBe(401);
  });

  it("answers 403 for a model outside the tenant's list, on every model route", async () => {
    const { gateway, dispatcher } = await testGateway();
    const res = await gateway.fetch(infer(KEYS.b));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "tenant 'b' may not use model 'simple'" });
    for (const path of ['/v2/models/simple', '/v2/models/simple/ready', '/v2/models/simple/versions/1/config']) {
      expect((await gateway.fetch(req(path, { key: KEYS.b }))).status).toBe(403);
    }
    expect(dispatcher.calls).toHaveLength(0);
  });

  it('serves health without a key, and everything else of /v2 only with one', async () => {
    const { gateway } = await testGateway();
    expect((await gateway.fetch(req('/v2/health/live'))).status).toBe(200);
    expect((await gateway.fetch(req('/v2/health/ready'))).status).toBe(200);
    expect((await gateway.fetch(req('/v2'))).status).toBe(401);
    const meta = await gateway.fetch(req('/v2', { key: KEYS.a }));
    expect(await meta.json()).toMatchObject({ name: 'triton' });
    expect((await gateway.fetch(req('/v2/models/simple/ready', { key: KEYS.a }))).status).toBe(200);
    expect((await gateway.fetch(req('/v2/models/simple', { key: KEYS.a }))).status).toBe(200);
    expect((await gateway.fetch(req('/v2/models/simple/infer', { key: KEYS.a }))).status).toBe(405);
    gateway.startDraining();
    expect((await gateway.fetch(req('/v2/health/ready'))).status).toBe(503);
  });
});

describe('gateway infer', () => {
  it('decodes, dispatches with the tier and a deadline, and encodes the answer', async () => {
    const { gateway, dispatcher, metrics } = await testGateway();
    const res = await gateway.fetch(infer(KEYS.a, 'simple', simpleInferBody('req-7')));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-cache')).toBe('BYPASS');
    const body = (await res.json()) as { id: string; outputs: { name: string; data: number[] }[] };
    expect(body.id).toBe('req-7');
    expect(body.outputs[0]!.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const { ctx } = dispatcher.calls[0]!;
    expect(ctx.tier.name).toBe('premium');
    expect(ctx.tenantId).toBe('a');
    expect(metrics.requests.at(-1)).toMatchObject({ route: 'infer', tenant: 'a', tier: 'premium', model: 'simple', status: 200 });
  });

  it('lets x-tessera-deadline-ms shorten the deadline but never lengthen it, and refuses a bad one', async () => {
    const { gateway, dispatcher } = await testGateway();
    const before = Date.now();
    const headers = { 'x-tessera-deadline-ms': '50' };
    await gateway.fetch(req('/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), key: KEYS.a, headers }));
    expect(dispatcher.calls[0]!.ctx.deadline).toBeLessThanOrEqual(Date.now() + 50);
    await gateway.fetch(req('/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), key: KEYS.a, headers: { 'x-tessera-deadline-ms': '99999999' } }));
    expect(dispatcher.calls[1]!.ctx.deadline).toBeLessThanOrEqual(Date.now() + 5000);
    expect(dispatcher.calls[1]!.ctx.deadline).toBeGreaterThanOrEqual(before + 5000);
    const bad = await gateway.fetch(req('/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), key: KEYS.a, headers: { 'x-tessera-deadline-ms': '-3' } }));
    expect(bad.status).toBe(400);
  });

  it("maps the dispatcher's errors through the one status table, and bad bodies to 400", async () => {
    const { gateway } = await testGateway();
    expect((await gateway.fetch(infer(KEYS.a, 'nope'))).status).toBe(404);
    const bad = await gateway.fetch(infer(KEYS.a, 'simple', '{"inputs": 3}'));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/'inputs' must be an array/);
  });

  it("passes the client's abort signal to the dispatcher", async () => {
    const { gateway, dispatcher } = await testGateway();
    dispatcher.hold = new Promise(() => {});
    const controller = new AbortController();
    const pending = gateway.fetch(
      new Request(`${base}/v2/models/simple/infer`, { method: 'POST', body: simpleInferBody(), headers: { authorization: `Bearer ${KEYS.a}` }, signal: controller.signal }),
    );
    await vi.waitFor(() => expect(dispatcher.calls).toHaveLength(1));
    controller.abort();
    const res = await pending;
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/client went away|closed/);
  });
});

describe('gateway rate limits', () => {
  it('answers 429 with Retry-After and RateLimit headers once the burst is spent', async () => {
    const { gateway, metrics } = await testGateway();
    const first = await gateway.fetch(infer(KEYS.free));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await gateway.fetch(infer(KEYS.free))).status).toBe(200);
    const refused = await gateway.fetch(infer(KEYS.free));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: string }).error).toMatch(/rate limit exceeded for tenant 'f'/);
    expect(metrics.rateLimits).toEqual(['f']);
    // Another tenant is not affected.
    expect((await gateway.fetch(infer(KEYS.a))).status).toBe(200);
  });
});

describe('admin API', () => {
  const admin = (path: string, init: RequestInit = {}, key = KEYS.admin) => req(path, { ...init, key });

  it('refuses requests without the admin key, and tenant keys', async () => {
    const { gateway, metrics } = await testGateway();
    expect((await gateway.fetch(req('/admin/tenants'))).status).toBe(401);
    expect((await gateway.fetch(req('/admin/tenants', { key: KEYS.a }))).status).toBe(401);
    expect((await gateway.fetch(req('/admin/tenants', { method: 'POST', body: '{}', key: 'wrong' }))).status).toBe(401);
    expect(metrics.auth).toEqual(['admin', 'admin', 'admin']);
  });

  it('creates a tenant and a key that works at once, lists them without secrets, revokes and deletes', async () => {
    const { gateway } = await testGateway();
    const created = await gateway.fetch(admin('/admin/tenants', { method: 'POST', body: JSON.stringify({ id: 'newco', tier: 'free', allowedModels: ['simple'] }) }));
    expect(created.status).toBe(201);
    expect((await gateway.fetch(admin('/admin/tenants', { method: 'POST', body: JSON.stringify({ id: 'newco', tier: 'free' }) }))).status).toBe(400);
    expect((await gateway.fetch(admin('/admin/tenants', { method: 'POST', body: JSON.stringify({ tier: 'gold' }) }))).status).toBe(400);

    const keyRes = await gateway.fetch(admin('/admin/tenants/newco/keys', { method: 'POST' }));
    expect(keyRes.status).toBe(201);
    const { key, id } = (await keyRes.json()) as { key: string; id: string };
    expect(key).toMatch(/^tsk_/);
    expect((await gateway.fetch(infer(key))).status).toBe(200);

    const listed = await (await gateway.fetch(admin('/admin/tenants'))).text();
    expect(listed).toContain('newco');
    expect(listed).not.toContain(key);
    expect(listed).not.toMatch(/"hash"/);

    expect((await gateway.fetch(admin(`/admin/keys/${id}`, { method: 'DELETE' }))).status).toBe(200);
    expect((await gateway.fetch(infer(key))).status).toBe(401);
    expect((await gateway.fetch(admin(`/admin/keys/${id}`, { method: 'DELETE' }))).status).toBe(404);

    const key2 = ((await (await gateway.fetch(admin('/admin/tenants/newco/keys', { method: 'POST' }))).json()) as { key: string }).key;
    expect((await gateway.fetch(admin('/admin/tenants/newco', { method: 'DELETE' }))).status).toBe(200);
    expect((await gateway.fetch(infer(key2))).status).toBe(401);
    expect((await gateway.fetch(admin('/admin/tenants/newco', { method: 'DELETE' }))).status).toBe(404);
  });
});
