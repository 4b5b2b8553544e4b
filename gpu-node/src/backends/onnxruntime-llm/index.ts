export { createOnnxRuntimeLlmBackend, LlmInstance, ONNXRUNTIME_LLM_BACKEND } from './llm-backend.js';
export type { EngineStats } from './engine-stats.js';
