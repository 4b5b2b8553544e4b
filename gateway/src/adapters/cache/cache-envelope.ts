/**
 * How a CachedResponse is stored as one Redis string value: a compact binary envelope.
 *
 *   offset 0   4 bytes   magic "TSC" + format version 0x01
 *   offset 4   u32 BE    length M of the metadata JSON
 *   offset 8   M bytes   metadata JSON (UTF-8): {"h": headers, "c": computeUs, "t": storedAt}
 *   offset 8+M ...       the response body, raw
 *
 * Why not JSON with a base64 body: binary tensor bodies would grow by a third in Redis memory and
 * on the wire, and be re-encoded on every hit. Why not a Redis hash (Triton's redis_cache layout):
 * one GET/SET PX is one round trip and one TTL, no HGETALL reassembly. The magic and version make a
 * foreign or older value read as a miss (it is then overwritten) instead of a garbled response.
 */
import type { CachedResponse } from '../../core/ports/index.js';

const MAGIC = [0x54, 0x53, 0x43, 0x01]; // "TSC" v1
const HEAD = 8;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeCacheEnvelope(value: CachedResponse): Uint8Array {
  const meta = utf8.encode(JSON.stringify({ h: value.headers, c: value.computeUs, t: value.storedAt }));
  const out = new Uint8Array(HEAD + meta.length + value.body.byteLength);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(4, meta.length, false);
  out.set(meta, HEAD);
  out.set(value.body, HEAD + meta.length);
  return out;
}

/**
 * The stored response, or undefined when the bytes are not a valid envelope. The body is copied:
 * the client's reply buffer may be a view into memory it reuses.
 */
export function decodeCacheEnvelope(bytes: Uint8Array): CachedResponse | undefined {
  if (bytes.length < HEAD || MAGIC.some((b, i) => bytes[i] !== b)) return undefined;
  const metaLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, false);
  if (HEAD + metaLength > bytes.length) return undefined;
  let meta: unknown;
  try {
    meta = JSON.parse(utf8Decoder.decode(bytes.subarray(HEAD, HEAD + metaLength)));
  } catch {
    return undefined;
  }
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { h, c, t } = meta as { h?: unknown; c?: unknown; t?: unknown };
  if (typeof c !== 'number' || typeof t !== 'number' || !isStringRecord(h)) return undefined;
  // new Uint8Array(view) copies into a plain Uint8Array (Buffer#slice would return a view).
  return { headers: h, computeUs: c, storedAt: t, body: new Uint8Array(bytes.subarray(HEAD + metaLength)) };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}
