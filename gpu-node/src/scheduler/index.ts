export * from './scheduler.js';
export { DefaultScheduler } from './default-scheduler.js';
export { createScheduler } from './create-scheduler.js';
