/**
 * API-key primitives: SHA-256 of a presented key (./sha256.ts, synchronous because every request hashes
 * its key), a constant-time comparison of hex digests, and key generation from `crypto.getRandomValues`.
 */
import type { HeaderReader } from '../http/http-answer.js';
import { sha256HexSync } from './sha256.js';

/** Prefix of the keys we generate, so a leaked key is recognizable by secret scanners. */
export const API_KEY_PREFIX = 'tsk_';

/** Longest key we hash; a longer header is malformed, not worth hashing. */
export const MAX_API_KEY_LENGTH = 256;

/** sha256HexSync as a promise, for setup code that hashes keys among other awaited steps. */
export async function sha256Hex(text: string): Promise<string> {
  return sha256HexSync(text);
}

/**
 * Compares two strings in time that depends only on the length of `a`, never on where they first
 * differ: every character is visited and the differences are OR-ed. Lengths are not secret here
 * (digests have a fixed length); on a length mismatch `a` is compared with itself, so the work is the same.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const sameLength = a.length === b.length;
  const other = sameLength ? b : a;
  let diff = sameLength ? 0 : 1;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ other.charCodeAt(i);
  return diff === 0;
}

/** A new API key: the prefix plus 32 random bytes in base64url (256 bits of entropy). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** A short random id (for key ids and tenant ids the caller did not choose). */
export function generateId(prefix: string): string {
  return `${prefix}${base64Url(crypto.getRandomValues(new Uint8Array(9))).replace(/[-_]/g, 'x')}`;
}

function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export type PresentedKey =
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed'; readonly reason: string }
  | { readonly kind: 'key'; readonly key: string };

const KEY_CHARS = /^[\x21-\x7e]+$/;

/**
 * The key from `Authorization: Bearer <key>` or `x-api-key: <key>`. Both present and different is
 * malformed (we do not guess which one the client meant). The key itself never enters a message.
 */
export function presentedKey(headers: HeaderReader): PresentedKey {
  const authorization = headers.get('authorization');
  const apiKeyHeader = headers.get('x-api-key');
  let fromAuthorization: string | undefined;
  if (authorization !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match === null) return { kind: 'malformed', reason: "the Authorization header must be 'Bearer <key>'" };
    fromAuthorization = match[1];
  }
  const fromHeader = apiKeyHeader?.trim();
  if (fromAuthorization !== undefined && fromHeader !== undefined && fromHeader !== fromAuthorization) {
    return { kind: 'malformed', reason: "the Authorization and x-api-key headers carry different keys" };
  }
  const key = fromAuthorization ?? fromHeader;
  if (key === undefined) return { kind: 'missing' };
  if (key === '') return { kind: 'malformed', reason: 'the API key is empty' };
  if (key.length > MAX_API_KEY_LENGTH || !KEY_CHARS.test(key)) {
    return { kind: 'malformed', reason: `the API key must be 1-${MAX_API_KEY_LENGTH} printable ASCII characters` };
  }
  return { kind: 'key', key };
}
