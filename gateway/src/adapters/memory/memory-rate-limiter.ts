/** RateLimiter in process memory (embedded mode): the same token buckets as the Redis Lua script. */
import type { RateLimiter } from '../../core/ports/index.js';
import { takeTokens, type BucketState } from './token-bucket.js';

export interface MemoryRateLimiterOptions {
  /** Clock in ms; default Date.now. */
  readonly now?: () => number;
}

export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const buckets = new Map<string, BucketState>();
  return {
    async take(tenantId, elements, limits) {
      const { state, decision } = takeTokens(buckets.get(tenantId), now(), elements, limits);
      buckets.set(tenantId, state);
      return decision;
    },
  };
}
