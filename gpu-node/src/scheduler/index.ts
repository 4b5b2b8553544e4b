export * from './scheduler.js';
export { DefaultScheduler } from './default-scheduler.js';
export { createScheduler, rateLimitedInstances, type SchedulerHooks } from './create-scheduler.js';
export { isSchedulerError, schedulerError } from './scheduler-errors.js';
export { SchedulerRegistry, type SchedulerFactory, type SchedulingChoice } from './scheduler-registry.js';
