// Priority admission per model: the queue, its clock and what it reports to metrics.
export * from './admission-queue.js';
export * from './admission-observer.js';
export * from './clock.js';
