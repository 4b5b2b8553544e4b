// node:http adapters: the infer fast path ahead of the Hono app, and its body reader.
export * from './incoming-body.js';
export * from './native-infer.js';
export * from './raw-infer-front.js';
export * from './turn-end.js';
export * from './llm-http-upstream.js';
export * from './node-llm.js';
export * from './native-llm.js';
export * from './raw-infer-upstream.js';
export * from './llm-raw-front.js';
