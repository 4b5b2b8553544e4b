import { describe, expect, it } from 'vitest';
import { HpackDecoder } from './hpack-decoder.js';
import { huffmanEncode } from './huffman.js';
import { RecentStrings } from './recent-strings.js';

const literal = (text: string): Buffer => {
  const code = huffmanEncode(text);
  // Literal without indexing, new name 'x-p', Huffman value (RFC 7541 §6.2.2).
  return Buffer.concat([Buffer.from([0x00, 0x03]), Buffer.from('x-p'), Buffer.from([0x80 | code.length]), code]);
};

describe('RecentStrings', () => {
  it('finds a remembered code only for the same bytes, forgets the oldest past its size, keeps no long ones', () => {
    const recent = new RecentStrings(2, 8);
    const block = Buffer.from('..abcd..abce..');
    recent.remember(block, 2, 6, 'first');
    expect(recent.find(block, 2, 6)).toBe('first');
    expect(recent.find(block, 8, 12)).toBeUndefined(); // same length, last byte differs
    block[2] = 0x7a; // the block's buffer changing does not change what was remembered
    expect(recent.find(Buffer.from('abcd'), 0, 4)).toBe('first');
    recent.remember(Buffer.from('wxyz'), 0, 4, 'second');
    recent.remember(Buffer.from('qrst'), 0, 4, 'third');
    expect(recent.find(Buffer.from('abcd'), 0, 4)).toBeUndefined(); // replaced
    expect(recent.find(Buffer.from('wxyz'), 0, 4)).toBe('second');
    recent.remember(Buffer.from('123456789'), 0, 9, 'long');
    expect(recent.find(Buffer.from('123456789'), 0, 9)).toBeUndefined();
  });

  it('lets the decoder read repeated and alternating Huffman literals of one length right', () => {
    const decoder = new HpackDecoder(64 * 1024);
    const paths = ['/inference.GRPCInferenceService/ModelInfer', '/inference.GRPCInferenceService/ModelMeta'.padEnd(42, 'x'), '/a', '/b'];
    for (let round = 0; round < 3; round++) {
      for (const path of [...paths, ...Array.from({ length: 10 }, (_, i) => `/m${i}`)]) {
        expect(decoder.decode(literal(path)).fields).toEqual([['x-p', path]]);
      }
    }
  });
});
