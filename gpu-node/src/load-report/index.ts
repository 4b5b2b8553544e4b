// The node's load reports (to Redis, or pushed over HTTP to an edge), their metrics, and the execution-time EMA.
export * from './periodic-reporter.js';
export * from './load-reporter.js';
export * from './load-report-metrics.js';
export * from './exec-time-ema.js';
export * from './node-id.js';
export * from './http-report-pusher.js';
