/**
 * Triton's dynamic batcher for Tessera: priority queues with queue policies, preferred-size batch
 * formation, instance pulling, preserve_ordering and cancellation — deterministic under a FakeClock.
 * `DynamicBatchScheduler` is the node's Scheduler; the rest is exported for tests and the stats wiring.
 */
export { DynamicBatchScheduler } from './dynamic-batch-scheduler.js';
export type { DynamicBatchSchedulerExtras } from './dynamic-batch-scheduler.js';
export { DynamicBatcher, STOPPING_MESSAGE, TIMEOUT_MESSAGE, CANCELLED_MESSAGE } from './dynamic-batcher.js';
export type { BatchExecutor, DynamicBatcherDeps } from './dynamic-batcher.js';
export { batcherOptions, batcherOptionsFromConfig, DEFAULT_QUEUE_POLICY } from './batcher-options.js';
export type { DynamicBatcherOptions, QueuePolicy, TimeoutAction } from './batcher-options.js';
export { batchSignature, schedulingParameters } from './batcher-request.js';
export type { BatcherRequest, InputShape } from './batcher-request.js';
export { BatcherCounters } from './batcher-observer.js';
export type { BatcherObserver, BatchInfo, LeftQueueReason } from './batcher-observer.js';
export { realClock } from './clock.js';
export type { Clock, CancelTimer } from './clock.js';
export { FakeClock, flushPromises } from './fake-clock.js';
export type { GateGrant, InstanceGate, InstanceGateFactory } from './instance-gate.js';
export { RateLimiter } from './rate-limiter.js';
export type { RateLimitedInstance, RateLimitResource, ResourceOverride } from './rate-limiter.js';
export { PriorityQueue } from './priority-queue.js';
export { formBatch, batchFormingSettings } from './batch-former.js';
export type { BatchDecision } from './batch-former.js';
