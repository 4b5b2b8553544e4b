/**
 * Model configuration: reading config.pbtxt, Triton's auto-complete, normalization and validation, the
 * JSON forms, and the name helpers other packages need. The message types themselves come from
 * shared/src/gen/model_config_pb.ts.
 */
export * from './model-io-metadata.js';
export * from './data-types.js';
export * from './backend-names.js';
export { parseModelConfigText } from './parse-text.js';
export { autoCompleteConfig, modelSupportsBatching, DEFAULT_MAX_BATCH_SIZE } from './auto-complete.js';
export type { AutoCompleteOptions } from './auto-complete.js';
export { normalizeModelConfig, DEFAULT_SEQUENCE_IDLE_MICROSECONDS } from './normalize.js';
export type { NormalizeOptions } from './normalize.js';
export { validateModelConfig, collectModelConfigIssues } from './validate.js';
export type { ValidateOptions } from './validate.js';
export type { ConfigIssue } from './config-issues.js';
export { readModelConfig, deepFreeze } from './read-model-config.js';
export type { ReadModelConfigOptions } from './read-model-config.js';
export { modelConfigToTritonJson, modelConfigFromJson } from './triton-json.js';
export { DEFAULT_STREAM_INTERVAL, MAX_STREAM_INTERVAL, MAX_STREAM_INTERVAL_MS, streamIntervalOf } from './stream-interval.js';
export type { StreamInterval } from './stream-interval.js';
