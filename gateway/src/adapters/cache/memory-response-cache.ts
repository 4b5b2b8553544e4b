/**
 * The ResponseCache port in process memory, for embedded mode (no REDIS_URL): LRU by bytes, with a
 * TTL per entry. Like Triton's `local` cache it is bounded by a byte budget and evicts the least
 * recently used entries (a read refreshes recency); unlike it, entries also expire.
 *
 * A Map keeps insertion order, so "move to the end" on every read makes its first key the least
 * recently used one. Expired entries are dropped when read, or when eviction reaches them.
 * Each entry is charged its body, key and header bytes plus a fixed overhead, so a flood of tiny
 * entries cannot exceed the budget by bookkeeping alone.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { CachedResponse, ResponseCache } from '../../core/ports/index.js';

/** The default byte budget: 64 MiB. */
export const DEFAULT_MEMORY_CACHE_MAX_BYTES = 64 * 1024 * 1024;
const ENTRY_OVERHEAD_BYTES = 128;

export interface MemoryResponseCacheOptions {
  /** Byte budget for all entries; default 64 MiB. An entry bigger than the budget is not stored. */
  readonly maxBytes?: number;
  /** Time source for expiry; default `Date.now`. */
  readonly clock?: { now(): number };
}

export interface MemoryResponseCache extends ResponseCache {
  /** Entries held now (expired ones not yet dropped included). */
  readonly size: number;
  /** Bytes charged now. */
  readonly bytes: number;
}

interface Entry {
  readonly value: CachedResponse;
  readonly expiresAt: number;
  readonly charge: number;
}

/** Throws INVALID_ARG for a non-positive `maxBytes`. */
export function createMemoryResponseCache(options: MemoryResponseCacheOptions = {}): MemoryResponseCache {
  const maxBytes = options.maxBytes ?? DEFAULT_MEMORY_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw TesseraError.invalidArg(`memory cache maxBytes must be a positive integer, got ${maxBytes}`);
  }
  const clock = options.clock ?? { now: () => Date.now() };
  const entries = new Map<string, Entry>();
  let bytes = 0;

  const remove = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    bytes -= entry.charge;
  };

  return {
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
    async get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (clock.now() >= entry.expiresAt) {
        remove(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    async set(key, value, ttlSeconds) {
      remove(key);
      if (!(ttlSeconds > 0)) return;
      const charge = chargeOf(key, value);
      if (charge > maxBytes) return;
      // A private copy (new Uint8Array(view) copies, Buffer#slice would not): the caller's buffer may be
      // reused or transferred after it is served.
      const stored: CachedResponse = { ...value, headers: { ...value.headers }, body: new Uint8Array(value.body) };
      entries.set(key, { value: stored, expiresAt: clock.now() + ttlSeconds * 1000, charge });
      bytes += charge;
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
  };
}

function chargeOf(key: string, value: CachedResponse): number {
  let charge = ENTRY_OVERHEAD_BYTES + key.length * 2 + value.body.byteLength;
  for (const [name, text] of Object.entries(value.headers)) charge += (name.length + text.length) * 2;
  return charge;
}
