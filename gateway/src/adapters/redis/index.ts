export * from './lua-scripts.js';
export * from './redis-rate-limiter.js';
export * from './redis-tenant-store.js';
export * from './sequence-affinity.js';
export * from './sequence-id-key.js';
