// The core's own SHA-256 (gateway/src/core/auth/sha256.ts) must agree with node:crypto on every input.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256HexSync } from '../src/core/auth/index.js';

const reference = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('sha256HexSync', () => {
  it('matches the FIPS 180-4 examples', () => {
    expect(sha256HexSync('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256HexSync('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('matches node:crypto around the block boundaries', () => {
    for (let n = 0; n <= 200; n++) expect(sha256HexSync('k'.repeat(n))).toBe(reference('k'.repeat(n)));
  });

  it('matches node:crypto on any string, non-ASCII and lone surrogates included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => sha256HexSync(text) === reference(text)));
  });
});
