export { createOnnxRuntimeBackend, type OnnxRuntimeBackend, type OnnxRuntimeBackendOptions } from './onnxruntime-backend.js';
export { sessionSettingsFromConfig, type SessionSettings, type GraphOptimizationLevel } from './session-settings.js';
export { configTypeOfOrt, datatypeOfOrt, ortTypeOf, type OrtElementType } from './element-types.js';
