import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHttpFlood } from './http-flood.js';

describe('runHttpFlood', () => {
  let server: Server;
  let port: number;
  let served = 0;

  beforeAll(async () => {
    // Every third answer lacks the expected header value, as a cache MISS among HITs would.
    server = createServer((req, res) => {
      served += 1;
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        // A POST that lost its body would show up as a third value.
        res.setHeader('x-cache', req.method === 'POST' && body !== 'ping' ? 'NO-BODY' : served % 3 === 0 ? 'MISS' : 'HIT');
        res.end(body === 'ping' ? 'pong' : 'hello');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('counts expected answers, and the others as mismatched, from every thread', async () => {
    const result = await runHttpFlood({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/',
      body: new TextEncoder().encode('ping'),
      threads: 2,
      connections: 2,
      warmupMs: 20,
      measureMs: 200,
      expectHeader: { name: 'x-cache', value: 'HIT' },
    });
    expect(result.threads).toBe(2);
    expect(result.completed).toBeGreaterThan(0);
    expect(result.errors).toBe(0);
    expect(result.mismatched).toBeGreaterThan(0);
    expect(Object.keys(result.mismatchedValues)).toEqual(['MISS']);
    expect(result.latency.count).toBe(result.completed);
    expect(result.requestsPerSec).toBeGreaterThan(0);
  });

  it('counts another status as an error', async () => {
    const result = await runHttpFlood({ host: '127.0.0.1', port, method: 'GET', path: '/', threads: 1, connections: 1, warmupMs: 0, measureMs: 100, expectStatus: 204 });
    expect(result.completed).toBe(0);
    expect(result.errors).toBeGreaterThan(0);
    expect(result.firstError).toBe('HTTP 200');
  });

  it('counts transport errors, naming the first', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await runHttpFlood({ host: '127.0.0.1', port: deadPort, method: 'GET', path: '/', threads: 1, connections: 2, warmupMs: 0, measureMs: 100 });
    expect(result.completed).toBe(0);
    expect(result.errors).toBeGreaterThan(0);
    expect(result.firstError).toBe(`cannot connect to 127.0.0.1:${deadPort}: connect ECONNREFUSED 127.0.0.1:${deadPort}`);
  });

  it('fails before any load when the request cannot be encoded', async () => {
    const before = served;
    await expect(
      runHttpFlood({ host: '127.0.0.1', port, method: 'GET', path: '/', headers: { 'x-bad': 'a\r\nb' }, threads: 2, warmupMs: 0, measureMs: 100 }),
    ).rejects.toThrow("invalid value for header 'x-bad'");
    expect(served).toBe(before);
  });
});
