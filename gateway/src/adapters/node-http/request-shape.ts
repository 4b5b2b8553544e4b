/**
 * Shapes of a node:http request that the fast paths outside Hono leave to the Hono app, so that both
 * paths never disagree: a compressed body (the core's Web reader decompresses), and several
 * Authorization headers (node:http keeps the first, Web Headers join them into a malformed key, 401).
 */
import type { IncomingMessage } from 'node:http';

export function isCompressed(incoming: IncomingMessage): boolean {
  const coding = incoming.headers['content-encoding'];
  if (coding === undefined) return false;
  const normalized = coding.trim().toLowerCase();
  return normalized !== '' && normalized !== 'identity';
}

export function hasRepeatedAuthorization(incoming: IncomingMessage): boolean {
  const raw = incoming.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}
