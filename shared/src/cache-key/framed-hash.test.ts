/**
 * FramedHash gathers small fields before hashing them; the digest must be that of the byte stream
 * its field methods define, however the fields are cut into updates. The reference below builds that
 * stream whole (tag byte, float64 big-endian, payload) and hashes it in one go.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FramedHash } from './framed-hash.js';

type Field =
  | { kind: 'string'; value: string }
  | { kind: 'bytes'; value: Uint8Array }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'bigint'; value: bigint }
  | { kind: 'count'; value: number };

const TAGS = { string: 0x73, bytes: 0x62, number: 0x6e, boolean: 0x74, bigint: 0x69, count: 0x63 } as const;

function referenceHex(fields: readonly Field[]): string {
  const parts: Uint8Array[] = [];
  const head = (tag: number, value: number) => {
    const b = Buffer.alloc(9);
    b[0] = tag;
    b.writeDoubleBE(value, 1);
    parts.push(b);
  };
  for (const f of fields) {
    switch (f.kind) {
      case 'string': {
        const bytes = new TextEncoder().encode(f.value);
        head(TAGS.string, bytes.length);
        parts.push(bytes);
        break;
      }
      case 'bytes':
        head(TAGS.bytes, f.value.length);
        parts.push(f.value);
        break;
      case 'bigint': {
        const text = f.value.toString();
        head(TAGS.bigint, text.length);
        parts.push(Buffer.from(text, 'latin1'));
        break;
      }
      case 'boolean':
        head(TAGS.boolean, f.value ? 1 : 0);
        break;
      default:
        head(TAGS[f.kind], f.value);
    }
  }
  return createHash('sha256').update(Buffer.concat(parts)).digest('hex');
}

function framedHex(fields: readonly Field[]): string {
  const h = new FramedHash();
  for (const f of fields) {
    if (f.kind === 'string') h.string(f.value);
    else if (f.kind === 'bytes') h.bytes(f.value);
    else if (f.kind === 'bigint') h.bigint(f.value);
    else if (f.kind === 'boolean') h.boolean(f.value);
    else if (f.kind === 'number') h.number(f.value);
    else h.count(f.value);
  }
  return h.hex();
}

const field: fc.Arbitrary<Field> = fc.oneof(
  // Short and long, ASCII and not, lone surrogates included (both sides make them U+FFFD).
  fc.string({ unit: 'binary', maxLength: 40 }).map((value) => ({ kind: 'string' as const, value })),
  fc.string({ maxLength: 3000 }).map((value) => ({ kind: 'string' as const, value })),
  fc.string({ unit: 'grapheme', maxLength: 600 }).map((value) => ({ kind: 'string' as const, value })),
  fc.uint8Array({ maxLength: 2500 }).map((value) => ({ kind: 'bytes' as const, value })),
  fc.double().map((value) => ({ kind: 'number' as const, value })),
  fc.boolean().map((value) => ({ kind: 'boolean' as const, value })),
  fc.bigInt({ min: -(10n ** 1200n), max: 10n ** 1200n }).map((value) => ({ kind: 'bigint' as const, value })),
  fc.nat().map((value) => ({ kind: 'count' as const, value })),
);

describe('FramedHash', () => {
  it('hashes exactly the byte stream its fields define, however they are gathered', () => {
    fc.assert(
      fc.property(fc.array(field, { maxLength: 40 }), (fields) => {
        expect(framedHex(fields)).toBe(referenceHex(fields));
      }),
      { numRuns: 300 },
    );
  });

  it('fills the buffer exactly to its edge and past it', () => {
    for (let n = 1000; n < 1040; n++) {
      const fields: Field[] = [{ kind: 'bytes', value: new Uint8Array(n).fill(7) }, { kind: 'string', value: 'x'.repeat(100) }, { kind: 'number', value: n }];
      expect(framedHex(fields)).toBe(referenceHex(fields));
    }
  });
});
