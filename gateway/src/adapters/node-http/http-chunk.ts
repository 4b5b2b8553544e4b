/**
 * HTTP/1.1 chunked framing built in one buffer: `<hex length>\r\n<bytes>\r\n`, optionally followed by
 * the last chunk (`0\r\n\r\n`). node:http frames each `write` as four socket writes (length, CRLF,
 * bytes, CRLF) gathered into a writev; a relay that writes an event per token pays that per token
 * (docs/benchmarks.md, issue 20), so it frames its events itself (relay-to-response.ts).
 */

const HEX = '0123456789abcdef';
const LAST_CHUNK = [0x30, 0x0d, 0x0a, 0x0d, 0x0a];

/** `bytes` as one chunk (must not be empty: an empty chunk is the end of the body); `last` appends the end. */
export function frameChunk(bytes: Uint8Array, last = false): Buffer {
  const length = bytes.length;
  let digits = 1;
  while (length >>> (4 * digits) !== 0 && digits < 8) digits += 1;
  const out = Buffer.allocUnsafe(digits + 2 + length + 2 + (last ? LAST_CHUNK.length : 0));
  for (let i = 0; i < digits; i++) out[i] = HEX.charCodeAt((length >>> (4 * (digits - 1 - i))) & 15);
  out[digits] = 0x0d;
  out[digits + 1] = 0x0a;
  out.set(bytes, digits + 2);
  let at = digits + 2 + length;
  out[at++] = 0x0d;
  out[at++] = 0x0a;
  if (last) for (const byte of LAST_CHUNK) out[at++] = byte;
  return out;
}

/** The end of a chunked body alone. */
export function lastChunk(): Buffer {
  return Buffer.from(LAST_CHUNK);
}
