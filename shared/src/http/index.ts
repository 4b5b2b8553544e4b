export * from './server-timeouts.js';
export * from './pipelining-limit.js';
