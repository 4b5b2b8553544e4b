/**
 * The tiers every gateway knows without configuration. The numbers are a starting point for a small
 * fleet: premium is served first and waits longest, free is cheap to refuse. A config file may
 * override any field of these three and add tiers of its own. Every tier limits bytes as well as
 * requests and elements: a largest request (413 above it), bytes per second (429), and what its jobs
 * may keep in Redis (largest payload, most stored jobs per tenant, result TTL).
 */
import type { Tier } from '../core/ports/index.js';

const MIB = 1024 * 1024;

export const DEFAULT_TIERS: Readonly<Record<'premium' | 'standard' | 'free', Tier>> = Object.freeze({
  premium: Object.freeze({
    name: 'premium',
    priority: 1,
    queueTimeoutMs: 5000,
    queueShare: 1,
    rateLimits: Object.freeze({ requestsPerSecond: 200, burst: 400, elementsPerSecond: 50_000_000, elementsBurst: 100_000_000,
      bytesPerSecond: 256 * MIB, bytesBurst: 512 * MIB }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(['*']),
    maxRequestBytes: 64 * MIB,
    jobs: Object.freeze({ maxPayloadBytes: 64 * MIB, maxStoredJobs: 10_000, resultTtlSeconds: 86_400 }),
  }),
  standard: Object.freeze({
    name: 'standard',
    priority: 2,
    queueTimeoutMs: 2000,
    queueShare: 0.6,
    rateLimits: Object.freeze({ requestsPerSecond: 50, burst: 100, elementsPerSecond: 10_000_000, elementsBurst: 20_000_000,
      bytesPerSecond: 64 * MIB, bytesBurst: 128 * MIB }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(['*']),
    maxRequestBytes: 16 * MIB,
    jobs: Object.freeze({ maxPayloadBytes: 16 * MIB, maxStoredJobs: 1000, resultTtlSeconds: 86_400 }),
  }),
  free: Object.freeze({
    name: 'free',
    priority: 3,
    queueTimeoutMs: 500,
    queueShare: 0.2,
    rateLimits: Object.freeze({ requestsPerSecond: 5, burst: 10, elementsPerSecond: 1_000_000, elementsBurst: 2_000_000,
      bytesPerSecond: 1 * MIB, bytesBurst: 2 * MIB }),
    cacheTtlSeconds: 60,
    allowedModels: Object.freeze(['*']),
    // Free jobs: at most 10 stored, 256 KiB in and out each, kept an hour: a free tenant's share of
    // Redis is bounded by about 10 x (2 x 256 KiB x 4/3 base64) ~ 7 MB whatever it sends.
    maxRequestBytes: 1 * MIB,
    jobs: Object.freeze({ maxPayloadBytes: 256 * 1024, maxStoredJobs: 10, resultTtlSeconds: 3600 }),
  }),
});
