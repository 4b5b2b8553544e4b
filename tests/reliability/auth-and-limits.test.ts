/**
 * Auth abuse and request limits on a real gateway listening on loopback (startGateway, embedded
 * stores, a static fleet whose node is never reached: everything here is decided before routing),
 * plus a real node for the header limit and the server timeouts. Only the gaps left by
 * gateway/test/app-auth.test.ts and gpu-node/src/server/http/body-limits.test.ts (see docs/reliability.md).
 */
import { Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { exampleRepository, removeDir, startTestNode, type TestNode } from '../../gpu-node/test/support.js';
import { capturingLogger, simpleBody, type CapturingLogger } from './support/stack.js';

const KEY = { a: 'tsk_limits-a-secret', b: 'tsk_limits-b-secret', admin: 'limits-admin-secret' };
const MAX_BODY = 64 * 1024;

/** Every http.Server that starts listening in this file (the gateway's and the node's), to read their options. */
const servers: Server[] = [];
const originalListen = Server.prototype.listen;
vi.spyOn(Server.prototype, 'listen').mockImplementation(function (this: Server, ...args: unknown[]) {
  servers.push(this);
  return (originalListen as (...a: unknown[]) => Server).apply(this, args);
});

/** One raw HTTP/1.1 exchange; resolves with what the server sent before closing (or after `idleMs`). */
function rawExchange(port: number, text: string | Buffer, idleMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const done = (): void => {
      socket.destroy();
      resolve(received);
    };
    socket.setTimeout(idleMs, done);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (/\r\n\r\n/.test(received) && /content-length: (\d+)/i.test(received)) {
        const length = Number(/content-length: (\d+)/i.exec(received)![1]);
        if (received.length - received.indexOf('\r\n\r\n') - 4 >= length) done();
      }
    });
    socket.on('end', done);
    socket.on('error', (error) => (received === '' ? reject(error) : done()));
    socket.write(text);
  });
}

describe('auth abuse and limits (real gateway on loopback)', () => {
  let gateway: RunningGateway;
  let disabledAdmin: RunningGateway;
  let node: TestNode;
  let repository: string;
  let log: CapturingLogger;

  const url = (path: string) => `${gateway.url}${path}`;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    const tenants = [
      { id: 'a', tier: 'premium', keys: [{ id: 'a1', hash: await sha256Hex(KEY.a) }] },
      { id: 'b', tier: 'standard', allowedModels: ['other'], keys: [{ id: 'b1', hash: await sha256Hex(KEY.b) }] },
    ];
    log = capturingLogger();
    gateway = await startGateway({
      config: loadGatewayConfig(JSON.stringify({ maxBodyBytes: MAX_BODY, metrics: { requireAdminKey: true }, tenants })),
      adminKey: KEY.admin,
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: '127.0.0.1:9', http: null }],
      port: 0,
      host: '127.0.0.1',
      logger: log.logger,
    });
    disabledAdmin = await startGateway({
      config: loadGatewayConfig(JSON.stringify({ tenants })),
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: '127.0.0.1:9', http: null }],
      port: 0,
      host: '127.0.0.1',
      logger: capturingLogger().logger,
    });
    repository = await exampleRepository(['simple']);
    node = await startTestNode(repository);
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await disabledAdmin?.close({ graceMs: 500 });
    await node?.stop();
    await removeDir(repository);
    vi.restoreAllMocks();
  });

  it('admin: every admin route and method refuses no key, a tenant key and a wrong key; with no admin key configured, nothing opens it', async () => {
    const routes: [string, string][] = [
      ['GET', '/admin/tenants'], ['POST', '/admin/tenants'], ['GET', '/admin/tenants/a'], ['DELETE', '/admin/tenants/a'],
      ['POST', '/admin/tenants/a/keys'], ['DELETE', '/admin/keys/a1'], ['PUT', '/admin/tenants/a'], ['GET', '/admin/'],
    ];
    for (const [method, path] of routes) {
      const variants: Record<string, string>[] = [{}, bearer(KEY.a), bearer('not-the-admin-key'), { 'x-api-key': KEY.a }];
      for (const headers of variants) {
        const res = await fetch(url(path), { method, headers, ...(method === 'POST' ? { body: '{"tier":"free"}' } : {}) });
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
      }
      const res = await fetch(`${disabledAdmin.url}${path}`, { method, headers: bearer(KEY.admin) });
      expect([401, 403, 404], `${method} ${path} with the admin API disabled`).toContain(res.status);
    }
    // Nothing was changed by all that: tenant a's key still works.
    expect((await fetch(url('/v2'), { headers: bearer(KEY.a) })).status).toBe(200);
    // /metrics with requireAdminKey: the admin key only.
    expect((await fetch(url('/metrics'))).status).toBe(401);
    expect((await fetch(url('/metrics'), { headers: bearer(KEY.a) })).status).toBe(401);
    expect((await fetch(url('/metrics'), { headers: bearer(KEY.admin) })).status).toBe(200);
  });

  it('header injection: CR/LF in a key is refused by the parser, a key list or padding is not a key, nothing is reflected into response headers', async () => {
    const injected = await rawExchange(gateway.port, `GET /v2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY.a}\rX-Admin: 1\r\n\r\n`);
    expect(injected).toMatch(/^HTTP\/1\.1 400/);
    const wrong: Record<string, string>[] = [
      { 'x-api-key': `${KEY.a}, ${KEY.a}` },
      { authorization: `Bearer ${KEY.a},${KEY.b}` },
      { authorization: `Bearer ${KEY.a} extra` },
      { authorization: `Bearer\t${KEY.a}\tX-Tenant: b` },
      { authorization: `Basic ${Buffer.from(`a:${KEY.a}`).toString('base64')}` },
      { authorization: `Bearer ${'x'.repeat(8000)}` },
    ];
    for (const headers of wrong) {
      const res = await fetch(url('/v2'), { headers });
      expect(res.status, JSON.stringify(headers).slice(0, 100)).toBe(401);
      expect(await res.text()).not.toContain(KEY.a);
    }
    // Another tenant's key for a model outside its list: 403, and nothing of tenant a's is named.
    const other = await fetch(url('/v2/models/simple/infer'), { method: 'POST', body: simpleBody(1), headers: bearer(KEY.b) });
    expect(other.status).toBe(403);
    // An encoded CR/LF in the path (model name) is never turned into a response header.
    const reflected = await rawExchange(gateway.port, `POST /v2/models/x%0d%0aX-Injected:%201/infer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY.a}\r\nContent-Length: 2\r\n\r\n{}`);
    expect(reflected).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(reflected.split('\r\n\r\n')[0]).not.toMatch(/^x-injected/im);
  });

  it('oversize bodies: a declared, a chunked and a gzip-bomb body over maxBodyBytes get 400, and the gateway keeps serving', async () => {
    const infer = (body: Buffer | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
      fetch(url('/v2/models/simple/infer'), { method: 'POST', body, headers: { ...bearer(KEY.a), ...headers }, duplex: 'half' } as RequestInit);
    const declared = await infer(Buffer.alloc(MAX_BODY + 1, 0x20));
    expect(declared.status).toBe(400);
    expect(await declared.text()).toMatch(/exceeds the gateway's limit of 65536 bytes/);
    // Chunked (no Content-Length): counted while read.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(16 * 1024).fill(0x20));
        controller.close();
      },
    });
    expect((await infer(stream)).status).toBe(400);
    // 64 MiB of zeros gzip to ~64 KiB… under the limit on the wire, far over it decompressed.
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(MAX_BODY);
    const res = await infer(bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/limit/);
    expect((await fetch(url('/v2/health/live'))).status).toBe(200);
  });

  it('oversize headers: gateway and node answer 431 (Node’s 16 KiB header limit) and keep serving', async () => {
    const big = `GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`;
    expect(await rawExchange(gateway.port, big)).toMatch(/^HTTP\/1\.1 431/);
    expect(await rawExchange(node.httpPort!, big)).toMatch(/^HTTP\/1\.1 431/);
    expect((await fetch(url('/v2/health/live'))).status).toBe(200);
    expect((await fetch(`${node.http}/v2/health/live`)).status).toBe(200);
  });

  // Without their own `requestTimeout`, Node 20's defaults would let a client that sends its headers and
  // then dribbles the body (slowloris) hold a socket for up to 300 s; the gateway's deadline starts only
  // after the body is read. Every server sets a request timeout (shared/src/http/server-timeouts.ts).
  it('slow request bodies: both HTTP servers time a request out well before Node’s 300 s default', () => {
    const http = servers.filter((s) => s.listening);
    expect(http.length).toBeGreaterThanOrEqual(3); // two gateways, the node's HTTP (and its metrics)
    for (const server of http) {
      expect(server.requestTimeout).toBeGreaterThan(0);
      expect(server.requestTimeout).toBeLessThanOrEqual(60_000);
    }
  });

  it('keys never appear in the logs or the metrics (admin-created key included)', async () => {
    const admin = bearer(KEY.admin);
    expect((await fetch(url('/admin/tenants'), { method: 'POST', headers: admin, body: JSON.stringify({ id: 'newco', tier: 'free' }) })).status).toBe(201);
    const created = (await (await fetch(url('/admin/tenants/newco/keys'), { method: 'POST', headers: admin })).json()) as { key: string; id: string };
    expect((await fetch(url('/v2'), { headers: bearer(created.key) })).status).toBe(200);
    // Upstream failure (the static node is unreachable) and a revoked key: paths that log.
    await (await fetch(url('/v2/models/simple/infer'), { method: 'POST', body: simpleBody(3), headers: bearer(created.key) })).arrayBuffer();
    expect((await fetch(url(`/admin/keys/${created.id}`), { method: 'DELETE', headers: admin })).status).toBe(200);
    expect((await fetch(url('/v2'), { headers: bearer(created.key) })).status).toBe(401);
    const metrics = await (await fetch(url('/metrics'), { headers: admin })).text();
    const logs = log.lines.join('');
    expect(log.lines.length).toBeGreaterThan(0);
    for (const key of [...Object.values(KEY), created.key]) {
      expect(metrics).not.toContain(key);
      expect(logs).not.toContain(key);
    }
  });
});
