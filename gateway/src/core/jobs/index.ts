// Async jobs: routes, the job model as clients see it, idempotency, webhook signing and the runner
// that workers call. The durable queue is a port (ports/job-queue.ts); BullMQ implements it.
export * from './bytes.js';
export * from './idempotency.js';
export * from './job-routes.js';
export * from './job-runner.js';
export * from './job-view.js';
export * from './prefer-header.js';
export * from './spill-over.js';
export * from './webhook-signing.js';
export * from './webhook-policy.js';
