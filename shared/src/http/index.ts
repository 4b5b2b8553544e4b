export * from './server-timeouts.js';
export * from './pipelining-limit.js';
export * from './incoming-request.js';
export * from './infer-path.js';
