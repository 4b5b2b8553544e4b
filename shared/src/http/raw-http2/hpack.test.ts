import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackError } from './hpack-decoder.js';
import { encodeHeaderBlock } from './hpack-encoder.js';
import { HUFFMAN_CODES, huffmanDecode, huffmanEncode } from './huffman.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');

describe('Huffman code (RFC 7541 Appendix B)', () => {
  it('derives the RFC codes from the lengths', () => {
    // A few entries of the RFC's table, from each end and the middle.
    expect(HUFFMAN_CODES[48]).toEqual({ code: 0x0, bits: 5 }); // '0'
    expect(HUFFMAN_CODES[32]).toEqual({ code: 0x14, bits: 6 }); // ' '
    expect(HUFFMAN_CODES[0]).toEqual({ code: 0x1ff8, bits: 13 });
    expect(HUFFMAN_CODES[10]).toEqual({ code: 0x3ffffffc, bits: 30 });
    expect(HUFFMAN_CODES[200]).toEqual({ code: 0x3ffffe2, bits: 26 });
    expect(HUFFMAN_CODES[255]).toEqual({ code: 0x3ffffee, bits: 26 });
    expect(HUFFMAN_CODES[256]).toEqual({ code: 0x3fffffff, bits: 30 }); // EOS
    // Kraft: a complete prefix code.
    expect(HUFFMAN_CODES.reduce((sum, { bits }) => sum + 2 ** -bits, 0)).toBe(1);
  });

  it('decodes what it encodes, every byte value', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('latin1');
    for (const text of [all, 'www.example.com', 'no-cache', '', 'a']) {
      const encoded = huffmanEncode(text);
      expect(huffmanDecode(encoded, 0, encoded.length)).toBe(text);
    }
  });

  it('refuses padding longer than 7 bits or not all ones, and EOS inside the string', () => {
    expect(huffmanDecode(Buffer.from([0xff]), 0, 1)).toBeUndefined(); // 8 bits of padding
    expect(huffmanDecode(Buffer.from([0x00 | 0x06]), 0, 1)).toBeUndefined(); // '0' then 110: not all ones
    expect(huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff]), 0, 4)).toBeUndefined(); // EOS
  });
});

describe('HPACK decoder (RFC 7541 Appendix C)', () => {
  it('decodes C.4: three requests with Huffman strings, sharing the dynamic table', () => {
    const decoder = new HpackDecoder(64 * 1024);
    expect(decoder.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ]);
    expect(decoder.decode(hex('8286 84be 5886 a8eb 1064 9cbf')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ]);
    expect(decoder.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ]);
  });

  it('decodes C.3.1 (plain strings) and what our encoder writes', () => {
    const decoder = new HpackDecoder(64 * 1024);
    expect(decoder.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d')).fields.at(-1)).toEqual([':authority', 'www.example.com']);
    const fields = { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0', 'x-many': ['a', 'b'] };
    expect(decoder.decode(encodeHeaderBlock(fields)).fields).toEqual([
      [':status', '200'],
      ['content-type', 'application/grpc'],
      ['grpc-status', '0'],
      ['x-many', 'a'],
      ['x-many', 'b'],
    ]);
  });

  it('encodes a frozen field set once and long values past its scratch buffer, as the decoder reads them', () => {
    const decoder = new HpackDecoder(64 * 1024);
    const fixed = Object.freeze({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-encoding': 'identity' });
    const block = encodeHeaderBlock(fixed);
    expect(encodeHeaderBlock(fixed)).toBe(block); // the same buffer: encoded once
    expect(decoder.decode(block).fields).toEqual([[':status', '200'], ['content-type', 'application/grpc+proto'], ['grpc-encoding', 'identity']]);
    const changing = { ':status': 404, 'grpc-message': 'x'.repeat(3000), 'x-big': 'y'.repeat(300) };
    expect(encodeHeaderBlock(changing)).not.toBe(encodeHeaderBlock(changing)); // an object that may change is encoded each time
    expect(decoder.decode(encodeHeaderBlock(changing)).fields).toEqual([[':status', '404'], ['grpc-message', 'x'.repeat(3000)], ['x-big', 'y'.repeat(300)]]);
  });

  it('applies size updates at the start of a block and refuses them past the setting or after a field', () => {
    const decoder = new HpackDecoder(64 * 1024);
    decoder.decode(hex('4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')); // custom-key added at 62
    expect(decoder.decode(hex('be')).fields).toEqual([['custom-key', 'custom-value']]);
    expect(() => decoder.decode(hex('20 be'))).toThrow(HpackError); // table emptied: 62 is gone
    expect(() => new HpackDecoder(1024).decode(hex('3fe2 1f'))).toThrow(HpackError); // 4097 > 4096
    expect(() => new HpackDecoder(1024).decode(hex('82 20'))).toThrow(HpackError);
  });

  it('refuses integers and strings that run past the block', () => {
    expect(() => new HpackDecoder(1024).decode(hex('ff ff ff ff ff ff'))).toThrow(HpackError);
    expect(() => new HpackDecoder(1024).decode(hex('40 0a 61'))).toThrow(HpackError);
  });
});
