/** The last-head memo gives the last reading back only for the same bytes; any other head is read afresh. */
import { describe, expect, it } from 'vitest';
import { LastHead } from './head-memo.js';
import { readRequestHead } from './head-reader.js';

const head = (target: string, length: number, extra = ''): string => `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n${extra}\r\n`;
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

describe('LastHead', () => {
  it('gives the same reading object for a head whose bytes repeat, whatever body follows', () => {
    const memo = new LastHead();
    const first = memo.read(bytes(`${head('/a', 3)}abc`));
    const second = memo.read(bytes(`${head('/a', 3)}xyz${head('/a', 3)}`));
    expect(typeof first).toBe('object');
    expect(second).toBe(first);
    expect(second).toEqual(readRequestHead(bytes(head('/a', 3))));
  });

  it.each([
    ['another target', head('/b', 3)],
    ['another Content-Length', head('/a', 4)],
    ['one more header', head('/a', 3, 'Accept: */*\r\n')],
    ['a refused header added', head('/a', 3, 'Transfer-Encoding: chunked\r\n')],
    ['the same head cut short', head('/a', 3).slice(0, -2)],
  ])('reads %s afresh after a remembered head', (_name, next) => {
    const memo = new LastHead();
    memo.read(bytes(head('/a', 3)));
    expect(memo.read(bytes(next))).toEqual(readRequestHead(bytes(next)));
  });

  it('remembers only heads it took: a head handed off or incomplete is read again each time', () => {
    const memo = new LastHead();
    const outside = bytes(head('/a', 3, 'Expect: 100-continue\r\n'));
    expect(memo.read(outside)).toBe('handOff');
    expect(memo.read(outside)).toBe('handOff');
    expect(memo.read(bytes('POST /a HTTP/1.1\r\nHost'))).toBe('incomplete');
  });

  it('keeps its own copy of the bytes: a head written over in the received buffer is not mistaken for the last', () => {
    const memo = new LastHead();
    const received = bytes(head('/a', 3));
    const first = memo.read(received);
    received.write('/b', 5, 'latin1');
    const next = memo.read(received);
    expect(next).not.toBe(first);
    expect(next).toMatchObject({ target: '/b' });
  });
});
