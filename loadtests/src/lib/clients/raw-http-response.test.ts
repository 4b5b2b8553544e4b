import { describe, expect, it } from 'vitest';
import { ResponseParser, type RawHttpResponse } from './raw-http-response.js';

const CHUNKED =
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nX-Twice: a\r\nx-twice: b\r\n\r\n' +
  '3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n';

/** Feeds `text` in the given pieces; returns every response completed along the way. */
function feed(parser: ResponseParser, pieces: readonly string[]): RawHttpResponse[] {
  const out: RawHttpResponse[] = [];
  for (const piece of pieces) {
    const response = parser.push(Buffer.from(piece, 'latin1'));
    if (response !== undefined) out.push(response);
  }
  return out;
}

describe('ResponseParser', () => {
  it('reads a chunked body cut at every possible point', () => {
    for (let cut = 1; cut < CHUNKED.length; cut++) {
      const parser = new ResponseParser();
      const [response, ...more] = feed(parser, [CHUNKED.slice(0, cut), CHUNKED.slice(cut)]);
      expect(more).toEqual([]);
      expect(response?.status).toBe(200);
      expect(response?.body.toString()).toBe('abcdefg');
      expect(response?.headers['x-twice']).toBe('a, b');
      expect(parser.reusable).toBe(true);
    }
  });

  it('reads a response delivered one byte at a time', () => {
    const text = 'HTTP/1.1 201 Created\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello';
    const parser = new ResponseParser();
    const [response] = feed(parser, [...text]);
    expect(response).toMatchObject({ status: 201, headers: { 'content-length': '5', connection: 'close' } });
    expect(response?.body.toString()).toBe('hello');
    expect(parser.reusable).toBe(false);
  });

  it('skips interim 1xx answers and reads bodiless statuses', () => {
    const parser = new ResponseParser();
    const [response] = feed(parser, ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n']);
    expect(response?.status).toBe(204);
    expect(response?.headers).toEqual({ 'x-a': '1' });
    expect(response?.body.length).toBe(0);
  });

  it('reads consecutive responses and flags bytes packed after an answer', () => {
    const parser = new ResponseParser();
    const one = 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na';
    expect(feed(parser, [one])[0]?.body.toString()).toBe('a');
    expect(parser.reusable).toBe(true);
    expect(feed(parser, [one + one])[0]?.body.toString()).toBe('a');
    expect(parser.reusable).toBe(false);
  });

  it('reads a body delimited by the end of the connection', () => {
    const parser = new ResponseParser();
    expect(feed(parser, ['HTTP/1.0 200 OK\r\n\r\nab', 'c'])).toEqual([]);
    expect(parser.end()?.body.toString()).toBe('abc');
    expect(parser.reusable).toBe(false);
  });

  it('knows an incomplete response from an idle close', () => {
    const parser = new ResponseParser();
    expect(parser.started).toBe(false);
    feed(parser, ['HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc']);
    expect(parser.started).toBe(true);
    expect(parser.end()).toBeUndefined();
  });

  it('keeps HTTP/1.0 keep-alive connections only when asked', () => {
    const parser = new ResponseParser();
    feed(parser, ['HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: Keep-Alive\r\n\r\n']);
    expect(parser.reusable).toBe(true);
    feed(parser, ['HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n']);
    expect(parser.reusable).toBe(false);
  });

  it('does not let a header named __proto__ change the record', () => {
    const [response] = feed(new ResponseParser(), ['HTTP/1.1 200 OK\r\n__proto__: x\r\nContent-Length: 0\r\n\r\n']);
    expect(response?.headers['__proto__']).toBe('x');
    expect(Object.keys(response?.headers ?? {})).toEqual(['__proto__', 'content-length']);
  });

  it.each([
    ['a bad status line', 'HTTP/2 200 OK\r\n\r\n', /invalid status line 'HTTP\/2 200 OK'/],
    ['a header without a colon', 'HTTP/1.1 200 OK\r\nnonsense\r\n\r\n', /invalid header line 'nonsense'/],
    ['space before the colon', 'HTTP/1.1 200 OK\r\nX-A : 1\r\n\r\n', /invalid header line/],
    ['a bad content-length', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n', /invalid content-length '5, 6'/],
    ['a bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /invalid chunk size 'zz'/],
    ['a chunk without its CRLF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY', /a chunk is not followed by CRLF/],
    ['an unknown transfer coding', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n', /unsupported transfer-encoding 'gzip'/],
  ])('rejects %s', (_what, text, message) => {
    expect(() => feed(new ResponseParser(), [text])).toThrow(message);
  });

  it('rejects a head that never ends', () => {
    const parser = new ResponseParser();
    feed(parser, ['HTTP/1.1 200 OK\r\n']);
    expect(() => feed(parser, [`X-Big: ${'a'.repeat(70_000)}`])).toThrow(/headers are too long/);
  });
});
