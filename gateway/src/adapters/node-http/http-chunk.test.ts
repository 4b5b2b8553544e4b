import { describe, expect, it } from 'vitest';
import { frameChunk, lastChunk } from './http-chunk.js';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');

describe('frameChunk', () => {
  it('frames bytes as node:http frames a chunked write (lowercase hex length, CRLFs)', () => {
    expect(text(frameChunk(Buffer.from('data: x\n\n')))).toBe('9\r\ndata: x\n\n\r\n');
    expect(text(frameChunk(new Uint8Array(16).fill(0x61)))).toBe(`10\r\n${'a'.repeat(16)}\r\n`);
    expect(text(frameChunk(new Uint8Array(255).fill(0x61))).slice(0, 4)).toBe('ff\r\n');
    expect(text(frameChunk(new Uint8Array(4096).fill(0x61))).slice(0, 6)).toBe('1000\r\n');
  });

  it('appends the last chunk when asked', () => {
    expect(text(frameChunk(Buffer.from('ab'), true))).toBe('2\r\nab\r\n0\r\n\r\n');
    expect(text(lastChunk())).toBe('0\r\n\r\n');
  });

  it('matches the length node:http writes for every size up to 70,000 bytes', () => {
    for (let length = 1; length < 70_000; length += 97) {
      const framed = text(frameChunk(new Uint8Array(length)));
      expect(framed.slice(0, framed.indexOf('\r\n'))).toBe(length.toString(16));
    }
  });
});
