export * from './protocol.js';
export * from './wire-tensor.js';
export * from './instance-worker.js';
export * from './execute-timing.js';
export * from './sibling-module.js';
export { serveWorker, wireError, type WorkerHandlers, type WorkerReply } from './worker-runtime.js';
export { WorkerPool, DEFAULT_IDLE_GRACE_MS, type WorkerPoolOptions, type SessionPlacement, type WorkerPoolStats } from './worker-pool.js';
export type { PooledSession } from './pool-thread.js';
export { serveSessions, type HostedSession, type SessionFactory } from './session-host.js';
