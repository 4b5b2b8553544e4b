/**
 * The ResponseCache port in Workers KV: one value per key, in the same binary envelope as the Redis
 * cache (adapters/cache/cache-envelope.ts), with KV's own expiry.
 *
 * Why KV rather than the Cache API: KV is global (a HIT at one location is a HIT everywhere once
 * replicated), readable from `wrangler dev` and tests, and keyed by our own cache key; the Cache API
 * is per data centre and keyed by URL. KV's limits shape the policy:
 * - `expirationTtl` must be at least 60 s: shorter tier TTLs are raised to 60 s (documented).
 * - Values are at most 25 MiB; the core's `maxEntryBytes` (default 1 MiB) stays far below.
 * - Writes to one key are limited to about one per second: the core's single flight coalesces
 *   identical misses in an isolate, and a lost race only costs a redundant write.
 * - Eventual consistency: a fresh entry may take up to 60 s to be seen at other locations (misses there).
 */
import type { CachedResponse, ResponseCache } from '../../core/ports/index.js';
import { decodeCacheEnvelope, encodeCacheEnvelope } from '../cache/cache-envelope.js';
import type { KvNamespace } from './workers-bindings.js';

/** KV's smallest expirationTtl. */
export const KV_MIN_TTL_SECONDS = 60;

export function createKvResponseCache(kv: KvNamespace): ResponseCache {
  return {
    async get(key) {
      const bytes = await kv.get(key, 'arrayBuffer');
      return bytes === null ? undefined : decodeCacheEnvelope(new Uint8Array(bytes));
    },
    async set(key: string, value: CachedResponse, ttlSeconds: number) {
      if (!(ttlSeconds > 0)) return;
      await kv.put(key, encodeCacheEnvelope(value), { expirationTtl: Math.max(KV_MIN_TTL_SECONDS, Math.ceil(ttlSeconds)) });
    },
  };
}
