import { describe, expect, it } from 'vitest';
import { bytesElementOffsets, countBytesElements, decodeBytesElements, encodeBytesElements } from './bytes-elements.js';
import { bytesOf, expectTesseraError } from './test-helpers.js';

describe('BYTES element serialization', () => {
  it('writes a 4-byte little-endian length before each element, strings as UTF-8', () => {
    expect(encodeBytesElements(['ab', bytesOf(0xff), ''])).toEqual(
      bytesOf(2, 0, 0, 0, 0x61, 0x62, 1, 0, 0, 0, 0xff, 0, 0, 0, 0),
    );
    expect(encodeBytesElements(['é'])).toEqual(bytesOf(2, 0, 0, 0, 0xc3, 0xa9));
    expect(encodeBytesElements([])).toEqual(new Uint8Array(0));
  });

  it('decodes into views and round-trips', () => {
    const data = encodeBytesElements(['hello', '', 'world!']);
    const elements = decodeBytesElements(data, 3);
    expect(elements.map((e) => new TextDecoder().decode(e))).toEqual(['hello', '', 'world!']);
    expect(elements[0]?.buffer).toBe(data.buffer);
    expect(countBytesElements(data)).toBe(3);
    expect(bytesElementOffsets(data, 3)).toEqual([0, 9, 13, 23]);
  });

  it('reports a truncated length prefix', () => {
    expectTesseraError(() => decodeBytesElements(bytesOf(1, 0, 0, 0, 7, 9, 9)), 'INVALID_ARG', /element 1 needs a 4-byte length at offset 5, but only 2/);
    expectTesseraError(() => countBytesElements(bytesOf(1, 0)), 'INVALID_ARG', /truncated/);
  });

  it('reports an element running past the end', () => {
    expectTesseraError(() => decodeBytesElements(bytesOf(9, 0, 0, 0, 1, 2), undefined, "input 'x'"), 'INVALID_ARG', /input 'x' is truncated: element 0 declares 9 bytes/);
    // A length near 2^32 must not wrap around.
    expectTesseraError(() => decodeBytesElements(bytesOf(0xff, 0xff, 0xff, 0xff, 1)), 'INVALID_ARG', /declares 4294967295/);
  });

  it('checks the expected element count in both directions', () => {
    const data = encodeBytesElements(['a', 'b']);
    expectTesseraError(() => decodeBytesElements(data, 3), 'INVALID_ARG', /holds 2 BYTES elements, expected 3/);
    expectTesseraError(() => decodeBytesElements(data, 1), 'INVALID_ARG', /5 unexpected bytes after its 1 BYTES elements/);
    expect(decodeBytesElements(new Uint8Array(0), 0)).toEqual([]);
  });
});
