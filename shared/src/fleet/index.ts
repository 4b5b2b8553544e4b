// The fleet's shared contract: every Redis key name, the load report nodes write, join/leave events
// and the headers the gateway sends to nodes.
export * from './keys.js';
export * from './load-report.js';
export * from './fleet-event.js';
export * from './request-headers.js';
