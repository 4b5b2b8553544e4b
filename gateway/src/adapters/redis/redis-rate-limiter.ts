/**
 * RateLimiter on Redis: the token buckets of `lua/token-bucket.lua`, one atomic script call per request,
 * so any number of gateways share each tenant's limits exactly.
 *
 * Failure policy: FAIL OPEN. When Redis cannot answer (down, timeout), the request is allowed, a
 * warning is logged (at most once per `warnEveryMs`) and `onStoreError` is called (a metric). A dead
 * Redis must not stop paying traffic; limits resume by themselves when it is back.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { RateLimiter } from '../../core/ports/index.js';
import { rateLimitKey } from './keys.js';
import { runLua } from './lua-scripts.js';

export interface RedisRateLimiterOptions {
  readonly redis: Redis;
  /** Key prefix; default "tessera:". */
  readonly prefix?: string;
  readonly logger: Logger;
  /** Called on every request allowed because Redis failed; default none. */
  readonly onStoreError?: () => void;
  /** Least time between two warnings about Redis failures; default 10000 ms. */
  readonly warnEveryMs?: number;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { redis, logger } = options;
  const prefix = options.prefix ?? 'tessera:';
  const warnEveryMs = options.warnEveryMs ?? 10_000;
  let lastWarning = -Infinity;
  return {
    async take(tenantId, elements, limits) {
      try {
        const reply = (await runLua(redis, 'token-bucket', [rateLimitKey(prefix, tenantId)], [
          limits.requestsPerSecond,
          limits.burst,
          limits.elementsPerSecond,
          limits.elementsBurst,
          elements,
        ])) as [number, number, number, number];
        const [allowed, retryAfterMs, remaining, resetSeconds] = reply;
        return { allowed: allowed === 1, retryAfterMs, remaining, limit: limits.burst, resetSeconds };
      } catch (error) {
        options.onStoreError?.();
        const now = Date.now();
        if (now - lastWarning >= warnEveryMs) {
          lastWarning = now;
          logger.warn('rate limiter: Redis failed, allowing requests (fail open)', { error: (error as Error).message });
        }
        return { allowed: true, retryAfterMs: 0, remaining: limits.burst, limit: limits.burst, resetSeconds: 0 };
      }
    },
  };
}
