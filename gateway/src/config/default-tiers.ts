/**
 * The tiers every gateway knows without configuration. The numbers are a starting point for a small
 * fleet: premium is served first and waits longest, free is cheap to refuse. A config file may
 * override any field of these three and add tiers of its own.
 */
import type { Tier } from '../core/ports/index.js';

export const DEFAULT_TIERS: Readonly<Record<'premium' | 'standard' | 'free', Tier>> = Object.freeze({
  premium: Object.freeze({
    name: 'premium',
    priority: 1,
    queueTimeoutMs: 5000,
    queueShare: 1,
    rateLimits: Object.freeze({ requestsPerSecond: 200, burst: 400, elementsPerSecond: 50_000_000, elementsBurst: 100_000_000 }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(['*']),
  }),
  standard: Object.freeze({
    name: 'standard',
    priority: 2,
    queueTimeoutMs: 2000,
    queueShare: 0.6,
    rateLimits: Object.freeze({ requestsPerSecond: 50, burst: 100, elementsPerSecond: 10_000_000, elementsBurst: 20_000_000 }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(['*']),
  }),
  free: Object.freeze({
    name: 'free',
    priority: 3,
    queueTimeoutMs: 500,
    queueShare: 0.2,
    rateLimits: Object.freeze({ requestsPerSecond: 5, burst: 10, elementsPerSecond: 1_000_000, elementsBurst: 2_000_000 }),
    cacheTtlSeconds: 60,
    allowedModels: Object.freeze(['*']),
  }),
});
