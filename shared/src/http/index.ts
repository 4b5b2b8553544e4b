export * from './server-timeouts.js';
export * from './pipelining-limit.js';
export * from './incoming-request.js';
export * from './infer-path.js';
export * from './field-syntax.js';
