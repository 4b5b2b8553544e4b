export * from './create-gateway-app.js';
export * from './gateway-deps.js';
export * from './rate-limit.js';
export * from './infer-cache.js';
export type * from './app-env.js';
export * from './direct-infer.js';
export { matchInferPath, type InferTarget } from '../../../../shared/src/http/infer-path.js';
export * from './decoupled-models.js';
