// The fleet's shared contract: Redis key names, the load report nodes write, and join/leave events.
export * from './keys.js';
export * from './load-report.js';
export * from './fleet-event.js';
export * from './request-headers.js';
