export * from './header-length.js';
export * from './json-text.js';
export * from './parameters.js';
export * from './raw-input.js';
export * from './infer-request-decode.js';
export * from './infer-response-encode.js';
export * from './infer-request-encode.js';
export * from './infer-response-decode.js';
