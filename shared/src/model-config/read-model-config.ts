/**
 * The one call a model repository needs: config.pbtxt text → a completed, normalized, validated and
 * frozen ModelConfig, in Triton's order (parse → auto-complete → normalize → validate).
 */
import path from 'node:path';
import type { ModelConfig } from '../gen/model_config_pb.js';
import { autoCompleteConfig } from './auto-complete.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfigText } from './parse-text.js';
import type { ModelIoMetadata } from './model-io-metadata.js';
import { validateModelConfig } from './validate.js';

export interface ReadModelConfigOptions {
  readonly text: string;
  /** The config file's path; its directory's name is the model name when the config has none. */
  readonly fileName: string;
  /** The model file's inputs and outputs, when the backend could read them. */
  readonly io?: ModelIoMetadata;
  /** `--strict-model-config=true`: no auto-complete from the model file. */
  readonly strict?: boolean;
  readonly modelName?: string;
  readonly modelFiles?: readonly string[];
  readonly gpus?: readonly number[];
  readonly availableBackends?: readonly string[];
  readonly defaultMaxBatchSize?: number;
}

export function readModelConfig(options: ReadModelConfigOptions): Readonly<ModelConfig> {
  const parsed = parseModelConfigText(options.text, options.fileName);
  const modelName = options.modelName ?? path.basename(path.dirname(path.resolve(options.fileName)));
  const completed = autoCompleteConfig(parsed, options.io, {
    strict: options.strict ?? false,
    modelName,
    ...(options.modelFiles === undefined ? {} : { modelFiles: options.modelFiles }),
    ...(options.defaultMaxBatchSize === undefined ? {} : { defaultMaxBatchSize: options.defaultMaxBatchSize }),
  });
  const normalized = normalizeModelConfig(completed, { gpus: options.gpus ?? [] });
  validateModelConfig(normalized, {
    fileName: options.fileName,
    gpus: options.gpus ?? [],
    ...(options.io === undefined ? {} : { io: options.io }),
    ...(options.availableBackends === undefined ? {} : { availableBackends: options.availableBackends }),
  });
  return deepFreeze(normalized);
}

/** Configs are shared by every request of a model; freezing turns accidental mutation into a TypeError. */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}
