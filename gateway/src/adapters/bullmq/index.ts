// Async jobs on BullMQ: the JobQueue port, the workers, webhook delivery and job metrics.
export * from './bullmq-job-queue.js';
export * from './redis-connections.js';
export * from './job-metrics.js';
export * from './job-worker.js';
export * from './start-jobs.js';
export * from './webhook-delivery.js';
export * from './webhook-http.js';
