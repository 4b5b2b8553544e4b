// ResponseCache adapters: Redis (ioredis) for fleets, process memory for embedded mode.
export * from './redis-response-cache.js';
export * from './memory-response-cache.js';
export { encodeCacheEnvelope, decodeCacheEnvelope } from './cache-envelope.js';
