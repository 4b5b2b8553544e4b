export * from './prom-metrics.js';
