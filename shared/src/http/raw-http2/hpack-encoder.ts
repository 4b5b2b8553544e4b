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

export function encodeHeaderBlock(fields: OutgoingFields): Buffer {
  const parts: number[] = [];
  const status = fields[':status'];
  if (status !== undefined) {
    if (String(status) === '200') parts.push(STATUS_200);
    else pushLiteral(parts, ':status', String(status));
  }
  for (const name of Object.keys(fields)) {
    if (name === ':status') continue;
    const value = fields[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value as readonly string[]) pushLiteral(parts, name, one);
    else pushLiteral(parts, name, String(value));
  }
  return Buffer.from(parts);
}

function pushLiteral(out: number[], name: string, value: string): void {
  const index = STATIC_NAME_INDEX.get(name);
  if (index === undefined) {
    out.push(0x00);
    pushString(out, name);
  } else pushInteger(out, 0x00, 4, index);
  pushString(out, value);
}

function pushString(out: number[], text: string): void {
  const bytes = Buffer.from(text, 'latin1');
  pushInteger(out, 0x00, 7, bytes.length);
  for (const byte of bytes) out.push(byte);
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
