export * from './protocol.js';
export * from './wire-tensor.js';
export * from './instance-worker.js';
export * from './execute-timing.js';
export * from './sibling-module.js';
export { serveWorker, wireError, type WorkerHandlers, type WorkerReply } from './worker-runtime.js';
