export * from './model-platform.js';
export { createModelPlatform, type ModelPlatformOptions } from './default-platform.js';
export { ModelManager, LOAD_UNLOAD_NOT_ALLOWED, type ControlMode, type ModelManagerOptions } from './model-manager.js';
export { ModelVersion, UNLOADED_REASON } from './model-version.js';
export * from './model-stats.js';
export { validateInferRequest, requestPrefix, type ValidatedRequest } from './request-validator.js';
