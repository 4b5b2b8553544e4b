/**
 * HPACK encoding without the dynamic table (RFC 7541 §6.2.2, literal without indexing): a name from the
 * static table when it has one, values as plain octets. Our answers' header lists are small and vary
 * (load figures in the trailers), so the table would save little; the peer's decoder state never changes.
 */
import { STATIC_NAME_INDEX } from './static-table.js';

/** A header list as name → value or values (a node:http2 headers object's shape), ':status' first. */
export type OutgoingFields = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/** `:status 200`, static entry 8, the one indexed field we write. */
const STATUS_200 = 0x88;
/** An HPACK integer with a 4- or 7-bit prefix takes at most this many bytes for any length we write. */
const INTEGER_BYTES = 6;

/** Blocks of frozen field sets (an answer's fixed headers), encoded once: the block depends on the fields alone. */
const frozenBlocks = new WeakMap<OutgoingFields, Buffer>();
/** Where a block is written before it is copied out at its size (grown as needed, never shrunk). */
let scratch = Buffer.allocUnsafeSlow(1024);

export function encodeHeaderBlock(fields: OutgoingFields): Buffer {
  const frozen = Object.isFrozen(fields);
  if (frozen) {
    const known = frozenBlocks.get(fields);
    if (known !== undefined) return known;
  }
  let at = 0;
  const status = fields[':status'];
  if (status !== undefined) {
    if (String(status) === '200') scratch[at++] = STATUS_200;
    else at = writeLiteral(at, ':status', String(status));
  }
  for (const name in fields) {
    if (name === ':status') continue;
    const value = fields[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value as readonly string[]) at = writeLiteral(at, name, one);
    else at = writeLiteral(at, name, String(value));
  }
  const block = Buffer.allocUnsafe(at);
  scratch.copy(block, 0, 0, at);
  if (frozen) frozenBlocks.set(fields, block);
  return block;
}

/** A literal without indexing at `at` of the scratch buffer; returns where it ends. */
function writeLiteral(at: number, name: string, value: string): number {
  const needed = at + 3 * INTEGER_BYTES + name.length + value.length;
  if (needed > scratch.length) {
    const grown = Buffer.allocUnsafeSlow(Math.max(needed, 2 * scratch.length));
    scratch.copy(grown, 0, 0, at);
    scratch = grown;
  }
  const index = STATIC_NAME_INDEX.get(name);
  if (index === undefined) {
    scratch[at++] = 0x00;
    at = writeString(at, name);
  } else at = writeInteger(at, 0x00, 4, index);
  return writeString(at, value);
}

/** A string literal, not Huffman-coded, as octets (latin1, as Buffer.from(text, 'latin1') reads it). */
function writeString(at: number, text: string): number {
  at = writeInteger(at, 0x00, 7, text.length);
  return at + scratch.write(text, at, 'latin1');
}

function writeInteger(at: number, first: number, prefixBits: number, value: number): number {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    scratch[at++] = first | value;
    return at;
  }
  scratch[at++] = first | mask;
  let rest = value - mask;
  while (rest >= 0x80) {
    scratch[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  scratch[at++] = rest;
  return at;
}

/** An integer with an N-bit prefix, the prefix's high bits taken from `first`. */
export function pushInteger(out: number[], first: number, prefixBits: number, value: number): void {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    out.push(first | value);
    return;
  }
  out.push(first | mask);
  let rest = value - mask;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}
