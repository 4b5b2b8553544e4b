/**
 * `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): the same key from the same tenant
 * returns the same job, for as long as the job is kept (its result TTL). The job id is derived from
 * the tenant and the key (SHA-256), so the queue's own "add unless the id exists" makes the replay
 * atomic across gateways, and two tenants using the same key get two unrelated jobs. A key reused
 * with a different request (model, version or body) is refused: that is a client bug, not a replay.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { HeaderReader } from '../http/index.js';
import { sha256HexOf } from './bytes.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Printable ASCII, 1..255 characters (the draft's sf-string, without quoting rules). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The header's key, or undefined when absent; a malformed key is the caller's mistake (400). */
export function idempotencyKeyOf(headers: HeaderReader): string | undefined {
  const raw = headers.get(IDEMPOTENCY_HEADER);
  if (raw === null) return undefined;
  // The draft sends it as a structured-field string: "abc". Plain tokens are accepted too.
  const key = raw.trim().replace(/^"(.*)"$/, '$1');
  if (!KEY_PATTERN.test(key)) {
    throw TesseraError.invalidArg('Idempotency-Key must be 1-255 printable ASCII characters without spaces');
  }
  return key;
}

/** The job id for a tenant's key: "k" + 40 hex digits. */
export async function idempotentJobId(tenantId: string, key: string): Promise<string> {
  return `k${(await sha256HexOf('idempotency', tenantId, key)).slice(0, 40)}`;
}

/** A fresh job id: "j" + 32 hex digits (random; never a sequence that tells how many jobs exist). */
export function randomJobId(): string {
  return `j${crypto.randomUUID().replaceAll('-', '')}`;
}

/** Job ids as we make them; anything else in a URL is simply unknown (404) without asking the store. */
export const JOB_ID_PATTERN = /^(?:k[0-9a-f]{40}|j[0-9a-f]{32})$/;

export async function requestFingerprint(model: string, version: string | undefined, body: Uint8Array): Promise<string> {
  return sha256HexOf(model, version ?? '', body);
}
