/**
 * Hostile bytes at the raw HTTP/1.1 front door (shared/src/http/raw-http1, issue 18): every request outside its
 * strict subset must reach node:http unread, so it gets exactly node:http's answer (compared byte for byte with a
 * plain node:http server, Date aside), whether it comes first on a connection or after a request the raw path
 * served; the raw path itself serves none of them. Slow heads and bodies are cut with node:http's 408, and a
 * pipelining flood is answered one request at a time, in order. Real servers and sockets on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, rawRequest, startTestServer, type TestServer } from '../../shared/src/http/raw-http1/test-helpers.js';

let plain: TestServer;
let fronted: TestServer;

beforeAll(async () => {
  plain = await startTestServer({ raw: false });
  fronted = await startTestServer({ raw: true });
});

afterAll(async () => {
  await Promise.all([plain?.close(), fronted?.close()]);
});

const head = (lines: string, body = ''): string => `POST /raw HTTP/1.1\r\nHost: x\r\n${lines}\r\n${body}`;

const attempts: [string, string][] = [
  ['Content-Length with Transfer-Encoding', head('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n')],
  ['Transfer-Encoding before Content-Length', head('Transfer-Encoding: chunked\r\nContent-Length: 4\r\n', '0\r\n\r\n')],
  ['two equal Content-Lengths', head('Content-Length: 3\r\nContent-Length: 3\r\n', 'abc')],
  ['two different Content-Lengths', head('Content-Length: 3\r\nContent-Length: 5\r\n', 'abcde')],
  ['a Content-Length list', head('Content-Length: 3, 3\r\n', 'abc')],
  ['a signed Content-Length', head('Content-Length: +3\r\n', 'abc')],
  ['a negative Content-Length', head('Content-Length: -3\r\n', 'abc')],
  ['a hex Content-Length', head('Content-Length: 0x3\r\n', 'abc')],
  ['a space inside Content-Length', head('Content-Length: 1 2\r\n', 'abcdefghijkl')],
  ['a space before the colon', head('Content-Length : 3\r\n', 'abc')],
  ['obs-fold', head('Content-Length: 3\r\nX-Folded: a\r\n b\r\n', 'abc')],
  ['bare LF line ends', 'POST /raw HTTP/1.1\nHost: x\nContent-Length: 3\n\nabc'],
  ['a bare CR', head('Content-Length: 3\r\nX-A: a\rb\r\n', 'abc')],
  ['a NUL in a header value', head('Content-Length: 3\r\nX-A: a\0b\r\n', 'abc')],
  ['no Content-Length', head('', '')],
  ['HTTP/1.0', 'POST /raw HTTP/1.0\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'],
  ['a lower-case method', 'post /raw HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'],
  ['two spaces in the request line', 'POST  /raw HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'],
  ['an absolute-form target', 'POST http://x/raw HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'],
  ['Expect', head('Content-Length: 3\r\nExpect: 100-continue\r\n', 'abc')],
  ['Upgrade', head('Content-Length: 3\r\nConnection: upgrade\r\nUpgrade: websocket\r\n', 'abc')],
  ['Connection: close', head('Content-Length: 3\r\nConnection: close\r\n', 'abc')],
  ['an overlong request line', `POST /raw${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc`],
  ['a header flood', head(`Content-Length: 3\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: v`).join('\r\n')}\r\n`, 'abc')],
];

describe('raw HTTP/1.1 front door against hostile requests', () => {
  it.each(attempts)('hands %s to node:http unread, first on a connection', async (_name, bytes) => {
    const before = fronted.rawServed.length;
    const [want, got] = await Promise.all([exchange(plain.port, [bytes]), exchange(fronted.port, [bytes])]);
    expect(got.text).toBe(want.text);
    expect(got.closed).toBe(want.closed);
    expect(fronted.rawServed.slice(before)).toEqual([]);
  });

  it('hands a long but legal head (over the subset bound, under node:http limit) to node:http, which serves it', async () => {
    const before = fronted.rawServed.length;
    const out = await exchange(fronted.port, [head(`Content-Length: 3\r\nX-Long: ${'v'.repeat(10_000)}\r\n`, 'abc')]);
    expect(out.text).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nnode POST \/raw abc$/);
    expect(fronted.rawServed.slice(before)).toEqual([]);
  });

  it.each(attempts)('hands %s to node:http unread after a raw request on the same connection', async (_name, bytes) => {
    const before = fronted.rawServed.length;
    const [want, got] = await Promise.all([exchange(plain.port, [bytes]), exchange(fronted.port, [rawRequest(0, 'ok') + bytes], { answers: 2 })]);
    const first = `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nDate: -\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\nraw /raw0 ok`;
    expect(got.text).toBe(first + want.text);
    expect(fronted.rawServed.slice(before)).toEqual(['/raw0 ok']);
  });

  // Each connection remembers its last head and skips reading a byte-identical one (head-memo.ts): a head that
  // differs from the served one in a single byte must be read afresh, never taken for the remembered one.
  const served = head('Content-Length: 3\r\nX-A: ab\r\n', 'abc');
  it.each([
    ['a signed Content-Length', head('Content-Length:+3\r\nX-A: ab\r\n', 'abc')],
    ['a NUL in a header value', head('Content-Length: 3\r\nX-A: \0b\r\n', 'abc')],
    ['a bare CR', head('Content-Length: 3\r\nX-A: \rb\r\n', 'abc')],
  ])('hands %s to node:http unread right after a served head one byte away from it', async (_name, bytes) => {
    expect(bytes.length).toBe(served.length);
    const before = fronted.rawServed.length;
    const [want, got] = await Promise.all([exchange(plain.port, [bytes]), exchange(fronted.port, [served + bytes], { answers: 2 })]);
    expect(got.text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(got.text.endsWith(`raw /raw abc${want.text}`)).toBe(true);
    expect(fronted.rawServed.slice(before)).toEqual(['/raw abc']);
  });

  it('reads a new Content-Length in a head otherwise the same as the served one', async () => {
    const before = fronted.rawServed.length;
    const out = await exchange(fronted.port, [served + head('Content-Length: 5\r\nX-A: ab\r\n', 'abcde') + served], { answers: 3 });
    expect(out.text.match(/raw \/raw [a-z]+/g)).toEqual(['raw /raw abc', 'raw /raw abcde', 'raw /raw abc']);
    expect(fronted.rawServed.slice(before)).toEqual(['/raw abc', '/raw abcde', '/raw abc']);
  });

  it.each([
    ['a head', 'POST /raw HTTP/1.1\r\nHost: x\r\n'],
    ['a body', head('Content-Length: 5\r\n', 'ab')],
  ])('answers %s cut short by the client end of stream as node:http does', async (_name, bytes) => {
    const before = fronted.rawServed.length;
    const [want, got] = await Promise.all([exchange(plain.port, [bytes], { endAfter: true }), exchange(fronted.port, [bytes], { endAfter: true })]);
    expect(want.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(got).toEqual(want);
    expect(fronted.rawServed.slice(before)).toEqual([]);
  });

  it('cuts a head sent too slowly with node:http 408 and closes', async () => {
    const slow = await startTestServer({ raw: true, timeouts: { headersTimeout: 300, requestTimeout: 300 } });
    try {
      const parts = ['POST /raw HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-${i}: v\r\n`)];
      const out = await exchange(slow.port, parts, { answers: 1, gapMs: 50, quietMs: 3_000 });
      expect(out.text).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      expect(out.closed).toBe(true);
      expect(slow.rawServed).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('cuts a body sent too slowly with 408 and closes, serving nothing of it', async () => {
    const slow = await startTestServer({ raw: true, timeouts: { headersTimeout: 300, requestTimeout: 400 } });
    try {
      const whole = rawRequest(1, 'x'.repeat(100));
      const parts = [whole.slice(0, -100), ...Array.from({ length: 100 }, () => 'x')];
      const out = await exchange(slow.port, parts, { answers: 1, gapMs: 20, quietMs: 3_000 });
      expect(out.text).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      expect(out.closed).toBe(true);
      expect(slow.rawServed).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('hands a body over the body limit to node:http instead of buffering it', async () => {
    const small = await startTestServer({ raw: true, maxBodyBytes: 10 });
    try {
      const out = await exchange(small.port, [rawRequest(1, 'x'.repeat(11))]);
      expect(out.text).toContain('node POST /raw1 xxxxxxxxxxx');
      expect(small.rawServed).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('answers a pipelining flood one request at a time, in order', async () => {
    const n = 2000;
    const before = fronted.rawServed.length;
    const bytes = Array.from({ length: n }, (_, i) => rawRequest(i, String(i))).join('');
    const out = await exchange(fronted.port, [bytes], { answers: n, quietMs: 300 });
    const bodies = out.text.match(/raw \/raw\d+ \d+/g) ?? [];
    expect(bodies).toEqual(Array.from({ length: n }, (_, i) => `raw /raw${i} ${i}`));
    expect(fronted.rawServed.length - before).toBe(n);
  });
});
