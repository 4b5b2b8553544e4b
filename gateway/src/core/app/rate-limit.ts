/**
 * Applies the tenant's tier limits: one request plus the request's tensor elements, taken atomically
 * by the RateLimiter port. Answers the IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`) on every limited route, and on refusal
 * a RESOURCE_EXHAUSTED error (429) whose `retryAfterMs` becomes `Retry-After`.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/request-headers.js';
import type { GatewayMetrics, RateLimiter } from '../ports/index.js';
import type { AuthContext } from '../auth/index.js';
import { PayloadTooLargeError, type HeaderReader } from '../http/index.js';

export async function applyRateLimit(
  limiter: RateLimiter,
  metrics: GatewayMetrics,
  auth: AuthContext,
  elements: number,
  setHeaders: (headers: Record<string, string>) => void,
  bytes = 0,
): Promise<void> {
  const limits = auth.tier.rateLimits;
  await applyByteRate(limiter, metrics, auth, bytes);
  if (limits.requestsPerSecond === 0 && limits.elementsPerSecond === 0) return;
  if (limits.elementsPerSecond > 0 && elements > limits.elementsBurst) {
    // It could never pass, however long the client waits: a client mistake, not a 429.
    throw TesseraError.invalidArg(
      `the request carries ${elements} tensor elements; tier '${auth.tier.name}' allows at most ${limits.elementsBurst} per request`,
    );
  }
  const decision = await limiter.take(auth.tenant.id, elements, limits);
  if (limits.requestsPerSecond > 0) {
    setHeaders({
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(Math.max(0, Math.floor(decision.remaining))),
      'RateLimit-Reset': String(Math.max(0, Math.ceil(decision.resetSeconds))),
    });
  }
  if (!decision.allowed) {
    metrics.rateLimited(auth.tenant.id, auth.tier.name);
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new TesseraError('RESOURCE_EXHAUSTED', `rate limit exceeded for tenant '${auth.tenant.id}' (tier '${auth.tier.name}'); retry in ${seconds} s`, {
      retryAfterMs: decision.retryAfterMs,
    });
  }
}

/**
 * The tier's bytes per second (request bodies as received): a bucket of its own, taken through the
 * same RateLimiter under `<tenant>:bytes` (":" cannot occur in a tenant id, so it is no tenant's
 * bucket). Refused: 429 with Retry-After. A body larger than the bucket could never pass: that is the
 * tier's largest request (413), checked when the body was read; this guards tiers configured without it.
 */
async function applyByteRate(limiter: RateLimiter, metrics: GatewayMetrics, auth: AuthContext, bytes: number): Promise<void> {
  const perSecond = auth.tier.rateLimits.bytesPerSecond ?? 0;
  const burst = auth.tier.rateLimits.bytesBurst ?? 0;
  if (perSecond <= 0 || bytes <= 0) return;
  if (bytes > burst) {
    throw new PayloadTooLargeError(`the request body is ${bytes} bytes; tier '${auth.tier.name}' allows at most ${burst} bytes per request`);
  }
  const decision = await limiter.take(`${auth.tenant.id}:bytes`, bytes, { requestsPerSecond: 0, burst: 0, elementsPerSecond: perSecond, elementsBurst: burst });
  if (!decision.allowed) {
    metrics.rateLimited(auth.tenant.id, auth.tier.name);
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new TesseraError(
      'RESOURCE_EXHAUSTED',
      `byte rate limit exceeded for tenant '${auth.tenant.id}' (tier '${auth.tier.name}': ${perSecond} bytes/s); retry in ${seconds} s`,
      { retryAfterMs: decision.retryAfterMs },
    );
  }
}

/** The client's DEADLINE_HEADER (relative ms) can shorten the gateway's timeout, never lengthen it. */
export function requestDeadline(headers: HeaderReader, now: number, timeoutMs: number): number {
  const raw = headers.get(DEADLINE_HEADER);
  if (raw === null) return now + timeoutMs;
  const trimmed = raw.trim();
  if (!/^[0-9]{1,10}$/.test(trimmed) || Number(trimmed) === 0) {
    throw TesseraError.invalidArg(`${DEADLINE_HEADER} must be a positive integer number of milliseconds, got ${JSON.stringify(raw)}`);
  }
  return now + Math.min(Number(trimmed), timeoutMs);
}
