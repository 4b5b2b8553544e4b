/**
 * The token-bucket arithmetic in TypeScript, for the in-process limiter. It mirrors
 * `adapters/redis/lua/token-bucket.lua` line for line (same state, same answers), so embedded mode
 * limits exactly as Redis mode does. Two buckets per tenant: requests and tensor elements; a take
 * succeeds only when both have enough, and then takes from both (all or nothing).
 */
import type { RateLimitDecision, RateLimits } from '../../core/ports/index.js';

export interface BucketState {
  requests: number;
  elements: number;
  /** ms of the last refill. */
  at: number;
}

export function takeTokens(state: BucketState | undefined, now: number, elements: number, limits: RateLimits): { state: BucketState; decision: RateLimitDecision } {
  const { requestsPerSecond: rps, burst, elementsPerSecond: eps, elementsBurst } = limits;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  let requests = state === undefined ? burst : Math.min(burst, state.requests + (elapsed * rps) / 1000);
  let elems = state === undefined ? elementsBurst : Math.min(elementsBurst, state.elements + (elapsed * eps) / 1000);
  const needRequests = rps > 0 ? 1 : 0;
  const needElements = eps > 0 ? elements : 0;
  let waitMs = 0;
  if (requests < needRequests) waitMs = Math.max(waitMs, ((needRequests - requests) * 1000) / rps);
  if (elems < needElements) waitMs = Math.max(waitMs, ((needElements - elems) * 1000) / eps);
  const allowed = waitMs === 0;
  if (allowed) {
    requests -= needRequests;
    elems -= needElements;
  }
  const resetSeconds = rps > 0 ? (burst - requests) / rps : 0;
  return {
    state: { requests, elements: elems, at: now },
    decision: { allowed, retryAfterMs: Math.ceil(waitMs), remaining: Math.floor(requests), limit: burst, resetSeconds: Math.ceil(resetSeconds) },
  };
}
