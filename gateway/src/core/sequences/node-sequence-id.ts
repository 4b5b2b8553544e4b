/**
 * The node-level sequence id of a tenant's sequence. A node keys a sequence's state by its id alone
 * (Triton's correlation id), and tenants pick their ids freely: forwarded as they are, tenant B's
 * sequence 5 would be tenant A's sequence 5 on the node. So the gateway never forwards a client's id:
 * it sends HMAC-SHA256(key, tenant scope, canonical id) cut to 63 bits (never 0, the node's "no
 * sequence"), as a number for a numeric client id and as that number's decimal string for a string id, so
 * a model's CORRID control (TYPE_UINT64 or TYPE_STRING) gets the type Triton would give it. Never the client's
 * value: a model that keys its own state by CORRID (as Python-backend models often do) must not mix tenants.
 *
 * - No state: every gateway replica derives the same id from the same key (shared through Redis,
 *   adapters/redis/sequence-id-key.ts; a random per-process key without Redis), so no binding has to
 *   carry it and no counter has to be allocated.
 * - No collision by choice: a tenant controls only its own input; reaching another tenant's node id
 *   would need a 63-bit preimage of a keyed hash whose key it never sees. The scope carries the tenant's
 *   generation (core/auth/tenant-scope.ts), so a re-created tenant reaches none of its predecessor's
 *   sequences either.
 * - Clients see their own id: the dispatcher puts it back into any answer parameter `sequence_id` and
 *   into node error messages that quote the node-level id.
 */

import type { SequenceIdKeySource } from '../ports/index.js';

type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const MASK_63 = (1n << 63n) - 1n;
const encoder = new TextEncoder();

export function randomSequenceIdKey(): Promise<Uint8Array> {
  return Promise.resolve(crypto.getRandomValues(new Uint8Array(32)));
}

export class NodeSequenceIds {
  private key: Promise<HmacKey> | undefined;

  constructor(private readonly source: SequenceIdKeySource = randomSequenceIdKey) {}

  /** The node-level id of `canonicalId` (`u:<decimal>` or `s:<string>`, sequence-params.ts) in `scope`. */
  async nodeId(scope: string, canonicalId: string): Promise<bigint> {
    const key = await this.cryptoKey();
    // JSON of the pair: no separator inside a scope or a string id can make two inputs equal.
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(JSON.stringify([scope, canonicalId]))));
    let value = 0n;
    for (let i = 0; i < 8; i++) value = (value << 8n) | BigInt(mac[i]!);
    const id = value & MASK_63;
    return id === 0n ? 1n : id;
  }

  private cryptoKey(): Promise<HmacKey> {
    this.key ??= this.source().then((bytes) => crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
    // A failed source (Redis away at the first sequence request) is asked again next time.
    this.key.catch(() => {
      this.key = undefined;
    });
    return this.key;
  }
}
