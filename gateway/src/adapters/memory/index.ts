export * from './memory-tenant-store.js';
export * from './memory-rate-limiter.js';
export * from './token-bucket.js';
export * from './memory-sequence-affinity.js';
