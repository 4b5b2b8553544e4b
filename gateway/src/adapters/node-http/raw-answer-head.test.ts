import { describe, expect, it } from 'vitest';
import { AnswerHeadMemo, MalformedAnswer, readAnswerHead } from './raw-answer-head.js';
import { RawAnswerReader, type AnswerHead } from './raw-answer-reader.js';

/** A node's stream head as the raw front writes it (stream-writer.ts): its Date value is the part that changes. */
const streamHead = (date: string, type = 'text/event-stream'): string =>
  `HTTP/1.1 200 OK\r\nContent-Type: ${type}\r\nCache-Control: no-cache\r\nDate: ${date}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nTransfer-Encoding: chunked`;
const DATE_1 = 'Sat, 28 Nov 2026 01:52:00 GMT';
const DATE_2 = 'Sat, 28 Nov 2026 01:52:01 GMT';

describe('AnswerHeadMemo', () => {
  it('answers a repeated head, and one that differs only in its Date value, with what a full read gives', () => {
    const memo = new AnswerHeadMemo();
    const texts = [streamHead(DATE_1), streamHead(DATE_1), streamHead(DATE_2), streamHead(DATE_1)];
    for (const text of texts) expect(memo.read(text)).toEqual(readAnswerHead(text));
    // The first was read in full; the three after it came from the memo.
    expect(memo.hits).toBe(3);
    expect(memo.read(streamHead(DATE_2)).headers.date).toBe(DATE_2);
  });

  it('gives every read its own headers object (a caller changing one changes nothing after it)', () => {
    const memo = new AnswerHeadMemo();
    const first = memo.read(streamHead(DATE_1));
    first.headers['content-type'] = 'changed';
    const second = memo.read(streamHead(DATE_1));
    expect(second.headers['content-type']).toBe('text/event-stream');
    expect(second.headers).not.toBe(first.headers);
  });

  it('reads in full any other head: another header value, another status, no Date line', () => {
    const memo = new AnswerHeadMemo();
    memo.read(streamHead(DATE_1));
    const other = streamHead(DATE_1, 'application/json!!');
    expect(memo.read(other).headers['content-type']).toBe('application/json!!');
    const noDate = 'HTTP/1.1 404 Not Found\r\ncontent-length: 3';
    expect(memo.read(noDate)).toEqual(readAnswerHead(noDate));
    expect(memo.read('HTTP/1.1 404 Not Found\r\ncontent-length: 4').framing).toEqual({ kind: 'length', length: 4 });
    expect(memo.hits).toBe(0);
    expect(memo.read(noDate).framing).toEqual({ kind: 'length', length: 3 });
    expect(memo.hits).toBe(0);
  });

  describe('hostile heads', () => {
    it('never reads around a Date value that hides a line break: a smuggled header line is read', () => {
      const memo = new AnswerHeadMemo();
      memo.read(streamHead(DATE_1));
      // Same length as an IMF date, so only the value's bytes tell it apart.
      const smuggled = streamHead('x\r\nX-Evil: 1\r\nY: 123456789012');
      expect(smuggled.length).toBe(streamHead(DATE_1).length);
      const got = memo.read(smuggled);
      expect(got.headers['x-evil']).toBe('1');
      expect(got.headers.date).toBe('x');
      expect(memo.hits).toBe(0);
    });

    it('refuses a Date value with a byte a field cannot hold, as a full read does', () => {
      const memo = new AnswerHeadMemo();
      memo.read(streamHead(DATE_1));
      const nul = streamHead(`Sat, 28 Nov 2026 01:52:0\x00 GMT`);
      expect(() => memo.read(nul)).toThrow(MalformedAnswer);
      expect(() => readAnswerHead(nul)).toThrow(MalformedAnswer);
    });

    it('never reads around a Date joined with another Date line', () => {
      const twice = (first: string): string => `HTTP/1.1 200 OK\r\nDate: ${first}\r\nDate: ${DATE_1}\r\ncontent-length: 0`;
      const memo = new AnswerHeadMemo();
      memo.read(twice(DATE_1));
      expect(memo.read(twice(DATE_2)).headers.date).toBe(`${DATE_2}, ${DATE_1}`);
      expect(memo.hits).toBe(0);
    });

    it('a reader with a memo refuses a bad framing header each time, after reporting the head, as one without', () => {
      const memo = new AnswerHeadMemo();
      const bad = 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n';
      for (let i = 0; i < 2; i++) {
        const heads: AnswerHead[] = [];
        const reader = new RawAnswerReader({ head: (head) => heads.push(head), data: () => undefined, end: () => undefined }, memo);
        expect(() => reader.feed(Buffer.from(bad, 'latin1'))).toThrow(MalformedAnswer);
        expect(heads).toHaveLength(1);
      }
      expect(memo.hits).toBe(0);
    });
  });

  it('a reader with a memo reads a stream after the same head twice, the second head from the memo', () => {
    const memo = new AnswerHeadMemo();
    for (const date of [DATE_1, DATE_2]) {
      let body = '';
      let head: AnswerHead | undefined;
      const reader = new RawAnswerReader({ head: (h) => (head = h), data: (bytes) => (body += bytes.toString('latin1')), end: () => undefined }, memo);
      reader.feed(Buffer.from(`${streamHead(date)}\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, 'latin1'));
      expect(body).toBe('hello');
      expect(head?.headers.date).toBe(date);
      expect(reader.ended && reader.reusable).toBe(true);
    }
    expect(memo.hits).toBe(1);
  });
});
