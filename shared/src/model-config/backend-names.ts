/**
 * Platform and backend names: which backend serves a platform, which platform a backend implies, which
 * model file each one loads by default, and how Triton guesses a backend when a config names none
 * (Triton's AutoCompleteBackendFields, re-stated from the protocol reference).
 */
import { TesseraError } from '../errors/index.js';
import type { ModelConfig } from '../gen/model_config_pb.js';

export const ENSEMBLE_PLATFORM = 'ensemble';

/** Known platforms and the backend each one runs on. */
export const PLATFORM_BACKENDS: Readonly<Record<string, string>> = {
  tensorrt_plan: 'tensorrt',
  onnxruntime_onnx: 'onnxruntime',
  pytorch_libtorch: 'pytorch',
  torch_aoti: 'pytorch',
  tensorflow_graphdef: 'tensorflow',
  tensorflow_savedmodel: 'tensorflow',
};

// The platform Triton fills in when only the backend is given. TensorFlow has two platforms, so it
// needs the model file to decide (see platformFromFiles); the other backends have none.
const BACKEND_PLATFORM: Readonly<Record<string, string>> = {
  tensorrt: 'tensorrt_plan',
  onnxruntime: 'onnxruntime_onnx',
  pytorch: 'pytorch_libtorch',
};

/** The file a model version loads when default_model_filename is empty, per platform then backend. */
const PLATFORM_DEFAULT_FILE: Readonly<Record<string, string>> = {
  tensorrt_plan: 'model.plan',
  onnxruntime_onnx: 'model.onnx',
  pytorch_libtorch: 'model.pt',
  tensorflow_graphdef: 'model.graphdef',
  tensorflow_savedmodel: 'model.savedmodel',
};
const BACKEND_DEFAULT_FILE: Readonly<Record<string, string>> = {
  tensorrt: 'model.plan',
  onnxruntime: 'model.onnx',
  pytorch: 'model.pt',
  python: 'model.py',
  openvino: 'model.xml',
};

/** Model files that identify their backend (and platform) when a config names neither. */
const FILE_BACKENDS: ReadonlyArray<{ file: string; backend: string; platform: string }> = [
  { file: 'model.plan', backend: 'tensorrt', platform: 'tensorrt_plan' },
  { file: 'model.onnx', backend: 'onnxruntime', platform: 'onnxruntime_onnx' },
  { file: 'model.pt', backend: 'pytorch', platform: 'pytorch_libtorch' },
  { file: 'model.graphdef', backend: 'tensorflow', platform: 'tensorflow_graphdef' },
  { file: 'model.savedmodel', backend: 'tensorflow', platform: 'tensorflow_savedmodel' },
  { file: 'model.py', backend: 'python', platform: '' },
];

/** The backend that serves this config: its `backend`, else the one its `platform` implies ('' for ensembles). */
export function resolveBackendName(config: Pick<ModelConfig, 'backend' | 'platform'>): string {
  if (config.backend !== '') return config.backend;
  return PLATFORM_BACKENDS[config.platform] ?? '';
}

export function isEnsemble(config: Pick<ModelConfig, 'platform'>): boolean {
  return config.platform === ENSEMBLE_PLATFORM;
}

/** Triton's default file name for the config's platform or backend (`model.<backend>` for custom backends). */
export function defaultModelFilename(config: Pick<ModelConfig, 'backend' | 'platform'>): string {
  if (isEnsemble(config)) return '';
  const byPlatform = PLATFORM_DEFAULT_FILE[config.platform];
  if (byPlatform !== undefined) return byPlatform;
  const backend = resolveBackendName(config);
  if (backend === '') return '';
  return BACKEND_DEFAULT_FILE[backend] ?? `model.${backend}`;
}

export interface BackendFieldOptions {
  /** The model's name (directory name), used for Triton's `model.<backend>` naming convention. */
  readonly modelName: string;
  /** File names found in the model's version directory, if known (e.g. ['model.onnx']). */
  readonly modelFiles?: readonly string[];
}

/**
 * Fills `backend` and `platform` the way Triton does before any backend sees the config, and rejects
 * pairs that do not belong together. Mutates `config`.
 */
export function fillBackendFields(config: ModelConfig, options: BackendFieldOptions): void {
  if (isEnsemble(config)) return; // validation rejects an ensemble with a backend
  const files = [...(options.modelFiles ?? [])];
  if (config.defaultModelFilename !== '') files.push(config.defaultModelFilename);
  const fromFile = FILE_BACKENDS.find((entry) => files.includes(entry.file));

  if (config.backend === '') {
    const byPlatform = PLATFORM_BACKENDS[config.platform];
    if (byPlatform !== undefined) config.backend = byPlatform;
    else if (fromFile !== undefined) config.backend = fromFile.backend;
    else if (config.platform === '') {
      // The last resort: a model directory named `<anything>.<backend>` (e.g. `add_sub.identity`).
      const dot = options.modelName.lastIndexOf('.');
      if (dot < 0 || dot === options.modelName.length - 1) {
        throw TesseraError.invalidArg(
          `Invalid model name: Could not determine backend for model '${options.modelName}' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'.`,
        );
      }
      config.backend = options.modelName.slice(dot + 1);
    }
  }

  if (config.platform === '') {
    const implied =
      config.backend === 'tensorflow' && fromFile?.backend === 'tensorflow'
        ? fromFile.platform
        : BACKEND_PLATFORM[config.backend];
    if (implied !== undefined) config.platform = implied;
  }

  const expectedBackend = config.platform === '' ? undefined : PLATFORM_BACKENDS[config.platform];
  if (config.platform !== '' && expectedBackend !== config.backend) {
    throw TesseraError.invalidArg(
      `unexpected 'platform' and 'backend' pair, got:${config.platform}, ${config.backend}`,
    );
  }
}
