import { describe, expect, it } from 'vitest';
import { MalformedAnswer, RawAnswerReader, type AnswerHead } from './raw-answer-reader.js';

/** Feeds `pieces` and answers what the reader reported (reusable read at the end event, as the upstream reads it). */
function read(pieces: readonly string[]): { head?: AnswerHead; body: string; ended: boolean; extra?: boolean; reusableAtEnd?: boolean } {
  const out: { head?: AnswerHead; body: string; ended: boolean; extra?: boolean; reusableAtEnd?: boolean } = { body: '', ended: false };
  const reader: RawAnswerReader = new RawAnswerReader({
    head: (head) => (out.head = head),
    data: (bytes) => (out.body += bytes.toString('latin1')),
    end: (extra) => {
      out.ended = true;
      out.extra = extra;
      out.reusableAtEnd = reader.reusable;
    },
  });
  for (const piece of pieces) reader.feed(Buffer.from(piece, 'latin1'));
  return out;
}

const CHUNKED = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n';

describe('RawAnswerReader', () => {
  it('reads a chunked answer the same however its bytes are split', () => {
    for (let cut = 1; cut < CHUNKED.length; cut++) {
      const got = read([CHUNKED.slice(0, cut), CHUNKED.slice(cut)]);
      expect(got.head).toEqual({ status: 200, headers: { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' } });
      expect(got.body).toBe('hello, world');
      expect(got.ended && got.reusableAtEnd).toBe(true);
    }
    expect(read(CHUNKED.split('')).body).toBe('hello, world');
  });

  it('reads Content-Length bodies, trailers, and answers framed by the connection end (never reused)', () => {
    expect(read(['HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nabc'])).toMatchObject({ body: 'abc', ended: true, reusableAtEnd: true });
    expect(read(['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nx-t: 1\r\n\r\n'])).toMatchObject({ body: 'x', ended: true });
    const toClose = read(['HTTP/1.1 200 OK\r\n\r\nsome bytes']);
    expect(toClose).toMatchObject({ body: 'some bytes', ended: false });
    expect(read(['HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n']).reusableAtEnd).toBe(false);
  });

  it('marks the connection not reusable, before handing it back, when bytes follow the answer in the same read', () => {
    const glued = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno';
    expect(read([glued])).toMatchObject({ body: 'ok', ended: true, extra: true, reusableAtEnd: false });
  });

  it('refuses what breaks HTTP/1.1', () => {
    const bad = [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 99 Odd\r\n\r\n',
      'HTTP/1.1 200 OK\r\nbad header\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nxy',
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${(100 * 1024 * 1024).toString(16)}\r\n`,
      `HTTP/1.1 200 OK\r\nx-pad: ${'a'.repeat(17 * 1024)}`,
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;${'e'.repeat(300)}`,
      'HTTP/1.1 200 OK\r\nx-split: a\nb\r\ncontent-length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nx-nul: a\x00b\r\ncontent-length: 0\r\n\r\n',
    ];
    for (const answer of bad) expect(() => read([answer]), answer.slice(0, 60)).toThrow(MalformedAnswer);
  });
});
