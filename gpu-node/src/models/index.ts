export * from './model-platform.js';
export { createModelPlatform, type ModelPlatformOptions } from './default-platform.js';
export { ModelVersion } from './model-version.js';
export * from './model-stats.js';
export { validateInferRequest, type ValidatedRequest } from './request-validator.js';
export type * from './model-statistics.js';
