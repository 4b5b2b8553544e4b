export * from './completion-cache.js';
export * from './llm-router.js';
export * from './llm-routes.js';
export * from './openai-error.js';
export * from './token-budget.js';
export * from './llm-deps.js';
export * from './direct-llm.js';
export * from './llm-path.js';
export type { LlmAnswer } from './llm-service.js';
