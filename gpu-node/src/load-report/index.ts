// The node's load reports in Redis (what gateways route on), their metrics, and the execution-time EMA.
export * from './load-reporter.js';
export * from './load-report-metrics.js';
export * from './exec-time-ema.js';
export * from './node-id.js';
