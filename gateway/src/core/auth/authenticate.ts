/**
 * API key → tenant and tier. The presented key is hashed (SHA-256) and looked up by hash; the stored
 * hash is then compared in constant time. Messages never contain the key, nor its hash.
 *
 * - no key, malformed header, unknown or revoked key → 401
 * - disabled tenant, model outside the tier's or tenant's list → 403
 * - a tenant whose tier this gateway does not know → 500 (an operator mistake, logged)
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { AuthRejection, Tenant, TenantStore, Tier } from '../ports/index.js';
import { AccessError } from '../http/access-error.js';
import type { HeaderReader } from '../http/http-answer.js';
import { constantTimeEqual, presentedKey } from './api-key.js';
import { verifiedKeyHashes, type KeyHashMemo } from './key-hash-memo.js';
import { sha256HexSync } from './sha256.js';

export interface AuthContext {
  readonly tenant: Tenant;
  readonly tier: Tier;
  readonly keyId: string;
}

/** An AccessError with the reason for the auth-rejection metric. */
export class AuthRejected extends AccessError {
  constructor(
    status: 401 | 403,
    message: string,
    readonly reason: AuthRejection,
  ) {
    super(status, message);
  }
}

export async function authenticate(
  store: TenantStore,
  tiers: Readonly<Record<string, Tier>>,
  headers: HeaderReader,
  memo: KeyHashMemo = verifiedKeyHashes,
): Promise<AuthContext> {
  const presented = presentedKey(headers);
  if (presented.kind === 'missing') {
    throw new AuthRejected(401, "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'", 'missing');
  }
  if (presented.kind === 'malformed') throw new AuthRejected(401, `malformed API key: ${presented.reason}`, 'malformed');
  const hash = memo.hashOf(presented.key);
  const found = await store.findByKeyHash(hash);
  if (found === undefined || found.key.revoked || !constantTimeEqual(hash, found.key.hash)) {
    throw new AuthRejected(401, 'unknown or revoked API key', 'unknown_key');
  }
  memo.remember(presented.key, hash);
  const { tenant, key } = found;
  if (tenant.disabled === true) throw new AuthRejected(403, `tenant '${tenant.id}' is disabled`, 'disabled');
  const tier = Object.hasOwn(tiers, tenant.tier) ? tiers[tenant.tier] : undefined;
  if (tier === undefined) {
    throw TesseraError.internal(`tenant '${tenant.id}' belongs to tier '${tenant.tier}', which this gateway does not configure`);
  }
  return { tenant, tier, keyId: key.id };
}

function listAllows(list: readonly string[] | undefined, model: string): boolean {
  return list === undefined || list.includes('*') || list.includes(model);
}

/** Both the tier and (when it narrows it) the tenant must allow the model. */
export function mayUseModel(auth: AuthContext, model: string): boolean {
  return listAllows(auth.tier.allowedModels, model) && listAllows(auth.tenant.allowedModels, model);
}

export function requireModel(auth: AuthContext, model: string): void {
  if (!mayUseModel(auth, model)) {
    throw new AuthRejected(403, `tenant '${auth.tenant.id}' may not use model '${model}'`, 'forbidden_model');
  }
}

/** The admin key: its sha256 is configured; any other key (tenant keys included) is refused. */
export async function authenticateAdmin(adminKeyHash: string | null, headers: HeaderReader): Promise<void> {
  if (adminKeyHash === null) {
    throw new AuthRejected(403, 'the admin API is disabled: configure adminKeyHash or TESSERA_ADMIN_KEY', 'admin');
  }
  const presented = presentedKey(headers);
  if (presented.kind !== 'key') {
    throw new AuthRejected(401, presented.kind === 'missing' ? 'missing admin key' : `malformed admin key: ${presented.reason}`, 'admin');
  }
  if (!constantTimeEqual(sha256HexSync(presented.key), adminKeyHash)) {
    throw new AuthRejected(401, 'invalid admin key', 'admin');
  }
}
