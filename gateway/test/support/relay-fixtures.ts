/**
 * What an SseRelay's CompletionMeter needs in unit tests: a limiter that always allows, metrics that
 * record nothing, and a tenant whose tier has an LLM budget far beyond any test stream.
 */
import type { AuthContext } from '../../src/core/auth/index.js';
import type { GatewayMetrics, RateLimitDecision, RateLimiter, Tier } from '../../src/core/ports/index.js';

export const unlimitedLimiter: RateLimiter = {
  async take(): Promise<RateLimitDecision> {
    return { allowed: true, retryAfterMs: 0, remaining: 1e9, limit: 1e9, resetSeconds: 60 };
  },
};

export const silentMetrics: GatewayMetrics = {
  request: () => undefined,
  rateLimited: () => undefined,
  authRejected: () => undefined,
  render: async () => ({ contentType: '', body: '' }),
};

const tier = { name: 't', llm: { tokensPerMinute: 1e9, tokensBurst: 1e9, cacheCompletions: false } } as unknown as Tier;
export const llmTenant = { tenant: { id: 'ten', name: 'ten', tier: 't' }, tier, keyId: 'k' } as AuthContext;
