/**
 * SequenceAffinity on Redis: one string key per sequence (`sequenceAffinityKey` in
 * shared/src/fleet/keys.ts, in the tenant's slot), `SET … PX ttl` on START and `GETEX … PX ttl` on
 * every later request, so the binding lives as long as the sequence is fed and any gateway replica
 * finds it. GETEX needs Redis >= 6.2.
 *
 * Errors are not swallowed here: the sequence router decides (a lookup that fails is a 503, a delete
 * that fails is harmless).
 */
import type { Redis } from 'ioredis';
import { DEFAULT_KEY_PREFIX, sequenceAffinityKey } from '../../../../shared/src/fleet/index.js';
import { decodeBinding, encodeBinding } from '../../core/sequences/index.js';
import type { SequenceAffinity, SequenceRef } from '../../core/ports/index.js';

export interface RedisSequenceAffinityOptions {
  readonly redis: Redis;
  /** Key prefix; default "tessera:". */
  readonly prefix?: string;
}

export function createRedisSequenceAffinity(options: RedisSequenceAffinityOptions): SequenceAffinity {
  const { redis } = options;
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  const keyOf = (ref: SequenceRef): string => sequenceAffinityKey(prefix, ref.tenantId, ref.model, ref.sequenceId);
  const ms = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs));
  return {
    async get(ref, refreshTtlMs) {
      const key = keyOf(ref);
      return decodeBinding(refreshTtlMs === undefined ? await redis.get(key) : await redis.getex(key, 'PX', ms(refreshTtlMs)));
    },
    async set(ref, binding, ttlMs) {
      await redis.set(keyOf(ref), encodeBinding(binding), 'PX', ms(ttlMs));
    },
    async delete(ref) {
      await redis.del(keyOf(ref));
    },
  };
}
