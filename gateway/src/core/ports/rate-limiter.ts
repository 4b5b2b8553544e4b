/** Per-tenant token buckets (requests and tensor elements), atomic in the backing store. */
import type { RateLimits } from './tenants.js';

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** When refused: how long until the request would be allowed, in ms. */
  readonly retryAfterMs: number;
  /** Requests left in the bucket after this decision (for RateLimit-Remaining). */
  readonly remaining: number;
  /** The bucket size (for RateLimit-Limit). */
  readonly limit: number;
  /** Seconds until the bucket is full again (for RateLimit-Reset). */
  readonly resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes 1 request and `elements` tensor elements from the tenant's buckets, or neither. Negative
   * `elements` (with no request bucket) gives them back: always allowed, the bucket capped at its burst.
   */
  take(tenantId: string, elements: number, limits: RateLimits): Promise<RateLimitDecision>;
}
