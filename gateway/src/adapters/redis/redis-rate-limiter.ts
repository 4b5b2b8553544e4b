/**
 * RateLimiter on Redis: the token buckets of `lua/token-bucket.lua`, decided atomically in Redis, so
 * any number of gateways share each tenant's limits exactly. The bucket in Redis is the only state:
 * no tokens are leased to a gateway.
 *
 * Batching (keyed-batcher.ts): a tenant's requests of one event-loop turn go in one script call at
 * the end of that turn, and those that arrive while the tenant's call is in flight go together in
 * the next one, in arrival order. The script decides a batch exactly as the same requests one call
 * each at that instant, so every request gets its own decision and RateLimit figures. No timer: a
 * lone request waits only for the code already running in its turn.
 *
 * Failure policy: FAIL OPEN. When Redis cannot answer (down, timeout), the request is allowed, a
 * warning is logged (at most once per `warnEveryMs`) and `onStoreError` is called (a metric). A dead
 * Redis must not stop paying traffic; limits resume by themselves when it is back. A failed batched
 * call fails open each of its requests, each counted once, as if each had failed alone.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../../core/ports/index.js';
import { DEFAULT_MAX_BATCH, KeyedBatcher } from './keyed-batcher.js';
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
  /** Most requests of one tenant decided by one script call; default 128. */
  readonly maxBatch?: number;
}

interface Take {
  readonly elements: number;
  readonly limits: RateLimits;
}

/** Values per request in the script's ARGV, and per decision in its reply. */
const ARGS_PER_TAKE = 5;
const REPLY_PER_TAKE = 4;

/** One script call for a batch of one tenant's takes; one decision per take, in order. */
export async function takeBatch(redis: Redis, key: string, takes: readonly Take[]): Promise<RateLimitDecision[]> {
  const args: number[] = new Array<number>(1 + ARGS_PER_TAKE * takes.length);
  args[0] = takes.length;
  for (let i = 0; i < takes.length; i++) {
    const { elements, limits } = takes[i]!;
    const at = 1 + ARGS_PER_TAKE * i;
    args[at] = limits.requestsPerSecond;
    args[at + 1] = limits.burst;
    args[at + 2] = limits.elementsPerSecond;
    args[at + 3] = limits.elementsBurst;
    args[at + 4] = elements;
  }
  const reply = (await runLua(redis, 'token-bucket', [key], args)) as number[];
  if (!Array.isArray(reply) || reply.length !== REPLY_PER_TAKE * takes.length) {
    throw new Error(`token-bucket answered ${Array.isArray(reply) ? reply.length : typeof reply} values for ${takes.length} requests`);
  }
  return takes.map((take, i) => {
    const at = REPLY_PER_TAKE * i;
    return { allowed: reply[at] === 1, retryAfterMs: reply[at + 1]!, remaining: reply[at + 2]!, limit: take.limits.burst, resetSeconds: reply[at + 3]! };
  });
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { redis, logger } = options;
  const prefix = options.prefix ?? 'tessera:';
  const warnEveryMs = options.warnEveryMs ?? 10_000;
  const batcher = new KeyedBatcher<Take, RateLimitDecision>((key, takes) => takeBatch(redis, key, takes), { maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH });
  let lastWarning = -Infinity;

  const failOpen = (error: unknown, limits: RateLimits): RateLimitDecision => {
    options.onStoreError?.();
    const now = Date.now();
    if (now - lastWarning >= warnEveryMs) {
      lastWarning = now;
      logger.warn('rate limiter: Redis failed, allowing requests (fail open)', { error: (error as Error).message });
    }
    return { allowed: true, retryAfterMs: 0, remaining: limits.burst, limit: limits.burst, resetSeconds: 0 };
  };

  return {
    async take(tenantId, elements, limits) {
      try {
        return await batcher.submit(rateLimitKey(prefix, tenantId), { elements, limits });
      } catch (error) {
        return failOpen(error, limits);
      }
    },
  };
}
