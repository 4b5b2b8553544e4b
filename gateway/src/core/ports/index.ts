export type * from './tenants.js';
export type * from './rate-limiter.js';
export type * from './response-cache.js';
export type * from './node-directory.js';
export type * from './node-transport.js';
export type * from './metrics.js';
export type * from './job-queue.js';
export type * from './dispatch-context.js';
