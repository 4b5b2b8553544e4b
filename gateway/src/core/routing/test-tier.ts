/**
 * Test support: a tier that stays out of the way of routing tests (priority 1, the whole queue, no
 * rate limits, no caching, every model), with the queue timeout a test needs.
 */
import type { Tier } from '../ports/index.js';

export function testTier(queueTimeoutMs: number): Tier {
  return {
    name: 'gold',
    priority: 1,
    queueTimeoutMs,
    queueShare: 1,
    rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 },
    cacheTtlSeconds: 0,
    allowedModels: ['*'],
  };
}
