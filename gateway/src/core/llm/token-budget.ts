/**
 * Token-based limits: each tier's tokens per minute (`tiers.<name>.llm.tokensPerMinute`) as one token
 * bucket per tenant, taken through the RateLimiter port under `<tenant>:llm-tokens` (":" cannot occur
 * in a tenant id, so it is no tenant's request bucket). With Redis the bucket is shared by every
 * gateway (the token-bucket Lua script, leases included); without it, the in-process limiter.
 *
 * - Prompt tokens are charged on admission (`chargePrompt`, or a bound settled later: prompt-charge.ts):
 *   refused -> 429 in OpenAI's shape with `retry-after`; a prompt larger than the bucket could never
 *   pass -> 429 "request too large", no retry.
 * - Completion tokens are charged as they stream (`CompletionMeter`), in steps of `chargeEvery` tokens
 *   so the limiter is not called per token, and in the background so no event waits for the store: a
 *   stream may run a step or two past its budget. A step refused ends the stream with an error event.
 * - Tokens metered for a tenant and model go to the `llmTokens` metric in the same steps.
 */
import type { AuthContext } from '../auth/index.js';
import type { GatewayMetrics, RateLimiter, RateLimits, Tier } from '../ports/index.js';
import { OpenAIApiError } from './openai-error.js';

/** Completion tokens metered between two calls to the limiter. */
export const DEFAULT_CHARGE_EVERY = 16;

export function bucketOf(tier: Tier): RateLimits | undefined {
  const perMinute = tier.llm?.tokensPerMinute ?? 0;
  if (perMinute <= 0) return undefined;
  return { requestsPerSecond: 0, burst: 0, elementsPerSecond: perMinute / 60, elementsBurst: tier.llm?.tokensBurst ?? perMinute };
}

export const bucketKey = (auth: AuthContext): string => `${auth.tenant.id}:llm-tokens`;

export function limitHeaders(limits: RateLimits, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(Math.floor(limits.elementsBurst)),
    'x-ratelimit-remaining-tokens': String(Math.max(0, Math.floor(remaining))),
    'x-ratelimit-reset-tokens': `${Math.max(0, Math.ceil(resetSeconds))}s`,
  };
}

/** The error both the up-front check and a stream's last event carry. */
export function tokenLimitError(auth: AuthContext, model: string, requested: number, retryAfterMs: number, headers: Record<string, string> = {}): OpenAIApiError {
  const perMinute = auth.tier.llm?.tokensPerMinute ?? 0;
  const seconds = Math.max(0.001, retryAfterMs / 1000);
  return new OpenAIApiError(
    429,
    `Rate limit reached for ${model} for tenant '${auth.tenant.id}' (tier '${auth.tier.name}') on tokens per min (TPM): ` +
      `Limit ${perMinute}, Requested ${requested}. Please try again in ${seconds.toFixed(3)}s.`,
    'tokens',
    null,
    'rate_limit_exceeded',
    retryAfterMs,
    headers,
  );
}

/** Charges the prompt's tokens (throws the 429); `setHeaders` gets the x-ratelimit-*-tokens headers. */
export async function chargePrompt(
  limiter: RateLimiter,
  metrics: GatewayMetrics,
  auth: AuthContext,
  model: string,
  tokens: number,
  setHeaders: (headers: Record<string, string>) => void,
): Promise<void> {
  const limits = bucketOf(auth.tier);
  if (limits !== undefined && tokens > 0) {
    if (tokens > limits.elementsBurst) {
      throw new OpenAIApiError(
        429,
        `Request too large for ${model} for tenant '${auth.tenant.id}' (tier '${auth.tier.name}') on tokens per min (TPM): ` +
          `Limit ${limits.elementsBurst}, Requested ${tokens}. The input must be reduced in order to run successfully.`,
        'tokens',
        null,
        'rate_limit_exceeded',
      );
    }
    const decision = await limiter.take(bucketKey(auth), tokens, limits);
    const headers = limitHeaders(limits, decision.remaining, decision.resetSeconds);
    setHeaders(headers);
    if (!decision.allowed) {
      metrics.rateLimited(auth.tenant.id, auth.tier.name);
      throw tokenLimitError(auth, model, tokens, decision.retryAfterMs, headers);
    }
  }
  if (tokens > 0) metrics.llmTokens?.(auth.tenant.id, model, 'in', tokens);
}

/** A stream's completion tokens: metered as they come, charged every `chargeEvery`. */
export class CompletionMeter {
  private pending = 0;
  /** Tokens counted so far (charged or pending). */
  total = 0;
  /** Set when a charge was refused: the wait the limiter gave. */
  refusedRetryMs: number | undefined;
  /** The request's bucket and its key, made once per stream rather than per charge (its tier is the request's). */
  private readonly limits: RateLimits | undefined;
  private readonly key: string;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly metrics: GatewayMetrics,
    private readonly auth: AuthContext,
    private readonly model: string,
    private readonly chargeEvery = DEFAULT_CHARGE_EVERY,
  ) {
    this.limits = bucketOf(auth.tier);
    this.key = bucketKey(auth);
  }

  /** Whether the pending tokens are due for a charge (call `settle` then). */
  add(tokens: number): boolean {
    this.pending += tokens;
    this.total += tokens;
    return this.pending >= this.chargeEvery;
  }

  /** Charges what is pending; false when the bucket refused it (the stream is over budget). */
  async settle(): Promise<boolean> {
    const tokens = this.pending;
    if (tokens === 0) return true;
    this.pending = 0;
    this.metrics.llmTokens?.(this.auth.tenant.id, this.model, 'out', tokens);
    const limits = this.limits;
    if (limits === undefined) return true;
    const decision = await this.limiter.take(this.key, Math.min(tokens, limits.elementsBurst), limits);
    if (decision.allowed) return true;
    this.metrics.rateLimited(this.auth.tenant.id, this.auth.tier.name);
    this.refusedRetryMs = decision.retryAfterMs;
    return false;
  }
}
