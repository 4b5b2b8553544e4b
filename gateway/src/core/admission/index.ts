// Priority admission per model: the queue and its clock (what it reports to metrics is a port, core/ports).
export * from './admission-queue.js';
export * from './clock.js';
