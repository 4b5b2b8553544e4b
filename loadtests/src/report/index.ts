// The benchmark summary (docs/benchmarks.md and results/<date>/summary.md).
export * from './summary.js';
