/**
 * RateLimiter on Redis: the token buckets of `lua/token-bucket.lua`, decided atomically in Redis, so
 * any number of gateways share each tenant's limits. With `leaseMs` > 0 (the gateway config's
 * `rateLimitLeaseMs`, 100 ms unless set), the
 * script call that decides a request also leases up to `leaseMs` of the tenant's rate to this
 * gateway, and the tenant's next requests here are decided locally from it (token-leases.ts: what
 * that keeps exact and what it bounds); `leaseMs` 0 decides every request in Redis.
 *
 * Batching (keyed-batcher.ts): a tenant's requests of one event-loop turn that the lease does not
 * cover go in one script call at the end of that turn, and those that arrive while the tenant's call
 * is in flight go together in the next one, in arrival order. The script decides a batch exactly as
 * the same requests one call each at that instant, so every request gets its own decision and
 * RateLimit figures. No timer: a lone request waits only for the code already running in its turn.
 *
 * Renewal ahead of time (`keepWarmMs`, default 5 s when leasing): a tenant's holding that was spent
 * from is renewed in the background before it expires or runs low (token-leases.ts: renewals follow
 * use, and an idle holding costs nothing), through the same per-key batcher, so the next request is
 * decided locally instead of waiting for Redis. One timer ticks every quarter lease while holdings are
 * spent from or being renewed, and stops at the first tick that finds none: an idle gateway runs no
 * timer for its leases, and a busy one does not make a timer per renewal.
 *
 * Failure policy: FAIL OPEN. When Redis cannot answer (down, timeout), the request is allowed, a
 * warning is logged (at most once per `warnEveryMs`) and `onStoreError` is called (a metric). A dead
 * Redis must not stop paying traffic; limits resume by themselves when it is back. A failed batched
 * call fails open each of its requests, each counted once, as if each had failed alone; tokens
 * already leased are still spent until they expire.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../../core/ports/index.js';
import { DEFAULT_MAX_BATCH, KeyedBatcher } from './keyed-batcher.js';
import { DEFAULT_KEY_PREFIX, rateLimitKey } from '../../../../shared/src/fleet/index.js';
import { runLua } from './lua-scripts.js';
import { TokenLeases, type LeaseGrant, type LeaseSize } from './token-leases.js';

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
  /** Lease this long of a tenant's rate per script call; default 0: every request decided in Redis. */
  readonly leaseMs?: number;
  /** Clock for lease expiry; default Date.now. */
  readonly now?: () => number;
  /** Renew a holding spent from ahead of time while it was used within this long; default 5000 ms, 0: never. */
  readonly keepWarmMs?: number;
  /** Runs the renewal tick; default a timer every quarter lease (tests call the tick themselves). */
  readonly renewalTicks?: (tick: () => void) => { start(): void; stop(): void };
}

/** A request to decide, or (`renew`) the renewal of the key's holding, which decides nothing. */
interface Take {
  readonly elements: number;
  readonly limits: RateLimits;
  readonly renew?: true;
}

/**
 * 5 s: an idle holding costs no script call now (renewals follow use), but it keeps up to a lease of
 * the tenant's tokens from other gateways and lets them be spent that long after Redis counted them.
 */
export const DEFAULT_KEEP_WARM_MS = 5_000;

/** Values per request in the script's ARGV, and per decision in its reply. */
const ARGS_PER_TAKE = 5;
const REPLY_PER_TAKE = 4;

/** Values the script appends when a lease was asked for. */
const REPLY_LEASE = 3;

export interface TakeBatchResult {
  readonly decisions: RateLimitDecision[];
  /** What the script leased, when `lease` was asked for. */
  readonly lease?: LeaseGrant;
}

/**
 * One script call for a batch of one tenant's takes; one decision per take, in order. With `lease`,
 * the script then leases up to that many tokens (under the last take's limits).
 */
export async function runTokenBucket(redis: Redis, key: string, takes: readonly Take[], lease?: LeaseSize): Promise<TakeBatchResult> {
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
  if (lease !== undefined) args.push(lease.requests, lease.elements);
  const expected = REPLY_PER_TAKE * takes.length + (lease === undefined ? 0 : REPLY_LEASE);
  const reply = (await runLua(redis, 'token-bucket', [key], args)) as number[];
  if (!Array.isArray(reply) || reply.length !== expected) {
    throw new Error(`token-bucket answered ${Array.isArray(reply) ? reply.length : typeof reply} values for ${takes.length} requests${lease === undefined ? '' : ' and a lease'}`);
  }
  const decisions = takes.map((take, i) => {
    const at = REPLY_PER_TAKE * i;
    return { allowed: reply[at] === 1, retryAfterMs: reply[at + 1]!, remaining: reply[at + 2]!, limit: take.limits.burst, resetSeconds: reply[at + 3]! };
  });
  if (lease === undefined) return { decisions };
  const at = REPLY_PER_TAKE * takes.length;
  const resetSeconds = decisions[decisions.length - 1]?.resetSeconds ?? 0;
  return { decisions, lease: { requests: reply[at]!, elements: reply[at + 1]!, remainingAfter: reply[at + 2]!, resetSeconds } };
}

/** The renewal of a holding: gives `gaveBack` back to the bucket and leases up to `lease`, in one script call. */
export async function renewLease(redis: Redis, key: string, limits: RateLimits, lease: LeaseSize, gaveBack: LeaseSize): Promise<LeaseGrant> {
  const args = [0, limits.requestsPerSecond, limits.burst, limits.elementsPerSecond, limits.elementsBurst, 0, lease.requests, lease.elements, gaveBack.requests, gaveBack.elements];
  const reply = (await runLua(redis, 'token-bucket', [key], args)) as number[];
  if (!Array.isArray(reply) || reply.length !== REPLY_LEASE) throw new Error(`token-bucket answered ${Array.isArray(reply) ? reply.length : typeof reply} values for a lease renewal`);
  const resetSeconds = limits.requestsPerSecond > 0 ? Math.ceil((limits.burst - reply[2]!) / limits.requestsPerSecond) : 0;
  return { requests: reply[0]!, elements: reply[1]!, remainingAfter: reply[2]!, resetSeconds };
}

/** One script call for a batch of one tenant's takes, without a lease; one decision per take, in order. */
export async function takeBatch(redis: Redis, key: string, takes: readonly Take[]): Promise<RateLimitDecision[]> {
  return (await runTokenBucket(redis, key, takes)).decisions;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { redis, logger } = options;
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  const warnEveryMs = options.warnEveryMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 0;
  const leases = new TokenLeases(leaseMs, options.now, leaseMs > 0 ? (options.keepWarmMs ?? DEFAULT_KEEP_WARM_MS) : 0);
  const decide = async (key: string, items: readonly Take[]): Promise<RateLimitDecision[]> => {
    const takes = items.filter((item) => item.renew !== true);
    const limits = items[items.length - 1]!.limits;
    if (takes.length === 0) {
      // Renewals alone: give back what is held now, lease the full target afresh.
      const gaveBack = leases.snapshot(key, limits);
      try {
        leases.renewed(key, limits, gaveBack, await renewLease(redis, key, limits, leases.target(limits), gaveBack));
      } catch (error) {
        leases.endRenewal(key);
        throw error;
      }
      return items.map(() => RENEWED);
    }
    // A renewal that shares a call with takes is their lease top-up.
    if (takes.length < items.length) leases.endRenewal(key);
    const wanted = leases.wanted(key, limits);
    const result = await runTokenBucket(redis, key, takes, wanted);
    if (result.lease !== undefined) leases.add(key, limits, result.lease);
    if (takes.length === items.length) return result.decisions;
    let next = 0;
    return items.map((item) => (item.renew === true ? RENEWED : result.decisions[next++]!));
  };
  const batcher = new KeyedBatcher<Take, RateLimitDecision>(decide, { maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH });
  const renew = (key: string, limits: RateLimits): void => {
    batcher.submit(key, { elements: 0, limits, renew: true }).catch(() => {
      // Still spent from: due again at the next tick.
      leases.endRenewal(key);
      ticks.start();
    });
  };
  const tick = (): void => {
    for (const due of leases.dueForRenewal()) renew(due.key, due.limits);
    if (!leases.renewalAhead) ticks.stop();
  };
  const ticks = options.renewalTicks?.(tick) ?? intervalTicks(tick, Math.max(5, leaseMs / 4));
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
      const key = rateLimitKey(prefix, tenantId);
      const local = leases.take(key, elements, limits);
      if (local !== undefined) {
        if (leases.lowAndWarm(key) && leases.markRenewing(key)) renew(key, limits);
        else ticks.start();
        return local;
      }
      // No tick to start here: a holding this call leases is due only once a later take spends from it.
      try {
        return await batcher.submit(key, { elements, limits });
      } catch (error) {
        return failOpen(error, limits);
      }
    },
  };
}

/** What a renewal item of a batch answers (nobody reads it). */
const RENEWED: RateLimitDecision = { allowed: true, retryAfterMs: 0, remaining: 0, limit: 0, resetSeconds: 0 };

/** A timer that runs `tick` every `everyMs` while started; unref'd, so it never holds the process open. */
function intervalTicks(tick: () => void, everyMs: number): { start(): void; stop(): void } {
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    start() {
      if (timer !== undefined) return;
      timer = setInterval(tick, everyMs);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
