/**
 * RateLimiterDO: one Durable Object per tenant (named `tenant:<id>`) holding the tenant's two token
 * buckets (requests and tensor elements), with the very arithmetic of the Node gateway
 * (adapters/memory/token-bucket.ts, the twin of the Redis Lua script). A Durable Object is a single
 * instance in the world, so the limit is global per tenant, not per location, and each take is
 * atomic because the object handles one event at a time (no await between read and write).
 *
 * The buckets live in memory: an object is evicted only after tens of seconds without requests, by
 * which time every bucket has refilled, so a restart starting "full" changes nothing observable.
 *
 * Worker side (`createDurableRateLimiter`): one subrequest per limited request. When the object
 * cannot be reached the request is let through (fail open, as the Node gateway does when Redis is
 * down) and the failure is logged at most once a minute.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../../core/ports/index.js';
import { errorResponse, jsonResponse } from '../../core/http/index.js';
import { takeTokens, type BucketState } from '../memory/token-bucket.js';
import { quietLogger } from './console-logger.js';
import type { DurableObjectNamespaceLike, DurableObjectStateLike } from './workers-bindings.js';

interface TakeBody {
  readonly elements: number;
  readonly limits: RateLimits;
}

export class RateLimiterDO {
  private bucket: BucketState | undefined;

  constructor(_state: DurableObjectStateLike, _env: unknown) {}

  async fetch(request: Request): Promise<Response> {
    try {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/take') return jsonResponse({ error: 'Not Found' }, 404);
      const body = (await request.json()) as TakeBody;
      if (typeof body.elements !== 'number' || typeof body.limits !== 'object' || body.limits === null) {
        throw TesseraError.invalidArg('a take needs {"elements": number, "limits": RateLimits}');
      }
      const { state, decision } = takeTokens(this.bucket, Date.now(), body.elements, body.limits);
      this.bucket = state;
      return jsonResponse(decision);
    } catch (error) {
      return errorResponse(toTesseraError(error), quietLogger);
    }
  }
}

export interface DurableRateLimiterOptions {
  readonly namespace: DurableObjectNamespaceLike;
  /** Default: silent. */
  readonly logger?: Logger;
}

export function createDurableRateLimiter(options: DurableRateLimiterOptions): RateLimiter {
  const logger = options.logger ?? quietLogger;
  let lastWarning = 0;
  return {
    async take(tenantId, elements, limits): Promise<RateLimitDecision> {
      try {
        const stub = options.namespace.get(options.namespace.idFromName(`tenant:${tenantId}`));
        const response = await stub.fetch('https://rate-limiter/take', {
          method: 'POST',
          body: JSON.stringify({ elements, limits }),
          headers: { 'Content-Type': 'application/json' },
        });
        if (!response.ok) throw TesseraError.unavailable(`the rate limiter object answered ${response.status}: ${await response.text()}`);
        return (await response.json()) as RateLimitDecision;
      } catch (error) {
        if (Date.now() - lastWarning > 60_000) {
          lastWarning = Date.now();
          logger.warn('rate limiter unreachable: letting requests through', { error: toTesseraError(error).message });
        }
        return { allowed: true, retryAfterMs: 0, remaining: limits.burst, limit: limits.burst, resetSeconds: 0 };
      }
    },
  };
}
