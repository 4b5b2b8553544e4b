/**
 * The raw front door on a real node:http server over loopback: requests in the subset are served by the raw path,
 * and the first one outside it hands the connection, unread bytes and all, to node:http at a request boundary.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { exchange, rawRequest, startTestServer, type TestServer } from './test-helpers.js';

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function start(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const server = await startTestServer(options);
  servers.push(server);
  return server;
}

const answer = (body: string, type = 'text/plain'): string =>
  `HTTP/1.1 200 OK\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nDate: -\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n${body}`;

describe('raw HTTP/1.1 front door', () => {
  it('serves requests in the subset on the raw path, in order, keeping the connection', async () => {
    const server = await start({ raw: true });
    const out = await exchange(server.port, [rawRequest(1, 'abc') + rawRequest(2, 'de')], { answers: 2 });
    expect(out.text).toBe(answer('raw /raw1 abc') + answer('raw /raw2 de'));
    expect(out.closed).toBe(false);
    expect(server.rawServed).toEqual(['/raw1 abc', '/raw2 de']);
  });

  it.each([
    ['a GET', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 'node GET /health '],
    ['a chunked POST to the raw route', 'POST /raw9 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n', 'node POST /raw9 xyz'],
    ['an Expect: 100-continue POST', 'POST /raw9 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok', 'node POST /raw9 ok'],
    ['another route', 'POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nq', 'node POST /other q'],
  ])('hands the connection to node:http at %s after a raw request, and node:http keeps it', async (_name, second, nodeBody) => {
    const server = await start({ raw: true, delayMs: 20 });
    const out = await exchange(server.port, [rawRequest(1, 'abc') + second + rawRequest(3, 'after')], { answers: 3 });
    const served = out.text.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(served[0]).toBe(answer('raw /raw1 abc'));
    expect(served.at(-2)).toContain(`\r\n\r\n${nodeBody}`);
    // From the hand-off on, node:http owns the connection: even a request in the subset is its now.
    expect(served.at(-1)).toContain('\r\n\r\nnode POST /raw3 after');
    expect(server.rawServed).toEqual(['/raw1 abc']);
    expect(server.frontDoor?.size).toBe(0);
  });

  it('gives the same answers whatever offset the pipelined bytes are split at', async () => {
    const server = await start({ raw: true });
    const all = rawRequest(1, 'abc') + rawRequest(2, '') + 'GET /x HTTP/1.1\r\nHost: x\r\n\r\n' + rawRequest(3, 'zz');
    const expected = answer('raw /raw1 abc') + answer('raw /raw2 ') + answer('node GET /x ') + answer('node POST /raw3 zz');
    const offsets = Array.from({ length: all.length - 1 }, (_, i) => i + 1);
    const outs = await Promise.all(offsets.map((k) => exchange(server.port, [all.slice(0, k), all.slice(k)], { answers: 4, gapMs: 10 })));
    for (const [i, out] of outs.entries()) expect(out.text, `split at ${offsets[i]}`).toBe(expected);
  });

  it('reads a body that arrives in pieces and serves the request after it', async () => {
    const server = await start({ raw: true });
    const body = 'x'.repeat(200_000);
    const first = rawRequest(1, body);
    const out = await exchange(server.port, [first.slice(0, 100), first.slice(100, 70_000), first.slice(70_000) + rawRequest(2, 'b')], { answers: 2, gapMs: 10 });
    expect(out.text).toBe(answer(`raw /raw1 ${body}`) + answer('raw /raw2 b'));
  });

  it.each([300, 0, 2500])('frames an answer as node:http does with keepAliveTimeout %i ms', async (keepAliveTimeout) => {
    const [plain, fronted] = await Promise.all([start({ raw: false, timeouts: { keepAliveTimeout } }), start({ raw: true, timeouts: { keepAliveTimeout } })]);
    const [want, got] = await Promise.all([exchange(plain.port, ['POST /raw1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nq']), exchange(fronted.port, [rawRequest(1, 'q')])]);
    expect(got.text.replace('raw /raw1 q', 'node POST /raw1 q').replace('Content-Length: 11', 'Content-Length: 17')).toBe(want.text);
  });

  it('closes an idle kept-alive connection after keepAliveTimeout', async () => {
    const server = await start({ raw: true, timeouts: { keepAliveTimeout: 300 } });
    const out = await exchange(server.port, [rawRequest(1, 'a')], { answers: 1, quietMs: 5_000 });
    expect(out.closed).toBe(true);
    expect(out.text).toContain('Keep-Alive: timeout=0');
  });

  it('at shutdown closes idle connections at once and a busy one right after its answer', async () => {
    const server = await start({ raw: true, delayMs: 200 });
    const idle = exchange(server.port, [rawRequest(1, 'a')], { answers: 1, quietMs: 5_000 });
    await new Promise((r) => setTimeout(r, 300));
    const busy = exchange(server.port, [rawRequest(2, 'b')], { answers: 1, quietMs: 5_000 });
    await new Promise((r) => setTimeout(r, 50));
    server.frontDoor?.closeIdle();
    const [idleOut, busyOut] = await Promise.all([idle, busy]);
    expect(idleOut).toEqual({ text: answer('raw /raw1 a'), closed: true });
    expect(busyOut).toEqual({ text: answer('raw /raw2 b'), closed: true });
    await new Promise((r) => setTimeout(r, 100)); // the server side's 'close' follows the client's
    expect(server.frontDoor?.size).toBe(0);
  });

  it('leaves no connection behind when the client closes mid-body, and serves nothing of it', async () => {
    const server = await start({ raw: true });
    await exchange(server.port, [rawRequest(1, 'x'.repeat(50)).slice(0, -20)], { answers: 0, quietMs: 100 });
    await new Promise((r) => setTimeout(r, 100));
    expect(server.rawServed).toEqual([]);
    expect(server.frontDoor?.size).toBe(0);
  });
});
