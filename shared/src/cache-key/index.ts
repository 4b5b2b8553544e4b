// The response-cache key: what identifies a cacheable inference result, shared by every gateway runtime.
export * from './cache-key.js';
export * from './cache-key-input.js';
export * from './cacheable.js';
