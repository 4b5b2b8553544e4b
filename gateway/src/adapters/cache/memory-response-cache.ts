/**
 * The ResponseCache port in process memory, for embedded mode (no REDIS_URL): the byte-bounded LRU
 * with expiry of core/cache/local-cache.ts behind the port's async interface, with a TTL per entry.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { LocalCache } from '../../core/cache/index.js';
import type { ResponseCache } from '../../core/ports/index.js';

/** The default byte budget: 64 MiB. */
export const DEFAULT_MEMORY_CACHE_MAX_BYTES = 64 * 1024 * 1024;

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

/** Throws INVALID_ARG for a non-positive `maxBytes`. */
export function createMemoryResponseCache(options: MemoryResponseCacheOptions = {}): MemoryResponseCache {
  const maxBytes = options.maxBytes ?? DEFAULT_MEMORY_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw TesseraError.invalidArg(`memory cache maxBytes must be a positive integer, got ${maxBytes}`);
  }
  const clock = options.clock ?? { now: () => Date.now() };
  const entries = new LocalCache(maxBytes);

  return {
    get size() {
      return entries.size;
    },
    get bytes() {
      return entries.bytes;
    },
    async get(key) {
      const now = clock.now();
      const value = entries.get(key, now);
      if (value === undefined) return undefined;
      return { ...value, remainingMs: entries.remainingMs(key, now)! };
    },
    async set(key, value, ttlSeconds) {
      const now = clock.now();
      if (!(ttlSeconds > 0)) {
        entries.delete(key);
        return;
      }
      entries.set(key, value, now + ttlSeconds * 1000, now);
    },
  };
}
