/**
 * The ResponseCache port on Redis (ioredis): one string value per entry (see cache-envelope.ts),
 * written with SET PX so Redis expires it, read with its remaining TTL in one script call
 * (adapters/redis/lua/cache-get.lua), so that the core's in-process copy can expire no later than
 * Redis does. Keys come from the core (shared/cache-key).
 *
 * Failing fast matters more than any single entry: the core bypasses the cache whenever get/set
 * throws, so a Redis outage must turn into quick errors, never into requests that hang. Two guards:
 * - the client the app builds must have `enableOfflineQueue: false`, so ioredis rejects commands at
 *   once while disconnected instead of queueing them until it reconnects (and should have a small
 *   `maxRetriesPerRequest`, e.g. 1); this adapter also refuses to send while the client is not
 *   connected ('wait', the lazyConnect state, is let through so that a lazy client connects);
 * - every command races `commandTimeoutMs`, which bounds a Redis that is up but not answering
 *   (overloaded, paused, or a half-open connection). The command itself is not cancelled (ioredis
 *   cannot), its late answer is ignored.
 */
import type { Redis } from 'ioredis';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { CachedResponse, ResponseCache, StoredResponse } from '../../core/ports/index.js';
import { runLuaBuffer } from '../redis/lua-scripts.js';
import { decodeCacheEnvelope, encodeCacheEnvelope } from './cache-envelope.js';

/** The default per-command timeout: 250 ms (a cache lookup must never cost more than a node call). */
export const DEFAULT_CACHE_COMMAND_TIMEOUT_MS = 250;

export interface RedisResponseCacheOptions {
  /** A connected ioredis client created with `enableOfflineQueue: false`. Not closed by this adapter. */
  readonly redis: Redis;
  /** Longest wait for one GET or SET, in ms; default 250. */
  readonly commandTimeoutMs?: number;
}

const SENDABLE = new Set(['ready', 'wait']);

/** Throws INVALID_ARG for a non-positive `commandTimeoutMs`. */
export function createRedisResponseCache(options: RedisResponseCacheOptions): ResponseCache {
  const { redis } = options;
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_CACHE_COMMAND_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw TesseraError.invalidArg(`cache commandTimeoutMs must be a positive number, got ${timeoutMs}`);
  }

  function command<T>(name: string, send: () => Promise<T>): Promise<T> {
    if (!SENDABLE.has(redis.status)) {
      return Promise.reject(TesseraError.unavailable(`response cache: redis is not connected (status ${redis.status})`));
    }
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(TesseraError.unavailable(`response cache: redis ${name} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      send().then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(TesseraError.unavailable(`response cache: redis ${name} failed: ${error instanceof Error ? error.message : String(error)}`));
        },
      );
    });
  }

  return {
    async get(key: string): Promise<StoredResponse | undefined> {
      const reply = await command('GET', () => runLuaBuffer(redis, 'cache-get', [key], []));
      const [value, pttl] = Array.isArray(reply) ? (reply as [unknown, unknown]) : [null, null];
      if (!(value instanceof Uint8Array)) return undefined;
      const decoded = decodeCacheEnvelope(value);
      if (decoded === undefined) return undefined;
      // PTTL was measured after this call began, so it bounds the entry's life counted from then too.
      // -1 (no expiry: not written by us) leaves it unknown.
      return typeof pttl === 'number' && pttl > 0 ? { ...decoded, remainingMs: pttl } : decoded;
    },
    async set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void> {
      // PX keeps sub-second tier TTLs; at least 1 ms because SET refuses PX 0.
      const ttlMs = Math.max(1, Math.round(ttlSeconds * 1000));
      const bytes = encodeCacheEnvelope(value);
      await command('SET', () => redis.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'PX', ttlMs));
    },
  };
}
