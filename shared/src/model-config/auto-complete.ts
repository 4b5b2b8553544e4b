/**
 * Triton's auto-complete (`--strict-model-config=false`, the default): fill what config.pbtxt leaves out
 * from the model file's own metadata. Covers the core part (name, backend/platform) for every backend and
 * the onnxruntime backend's part (inputs, outputs, max_batch_size, dynamic batching); other backends'
 * auto-complete needs their model files or Python code and is not ours to imitate.
 */
import { clone, create } from '@bufbuild/protobuf';
import { TesseraError } from '../errors/index.js';
import {
  ModelConfigSchema,
  ModelDynamicBatchingSchema,
  ModelInputSchema,
  ModelOutputSchema,
} from '../gen/model_config_pb.js';
import type { DataType, ModelConfig, ModelInput, ModelOutput } from '../gen/model_config_pb.js';
import { fillBackendFields, resolveBackendName } from './backend-names.js';
import { dataTypeFromName, toBigIntDims } from './data-types.js';
import type { ModelIoMetadata, ModelIoTensor } from './model-io-metadata.js';

/** Triton's `--backend-config=default-max-batch-size` default. */
export const DEFAULT_MAX_BATCH_SIZE = 4;

export interface AutoCompleteOptions {
  /** true = `--strict-model-config=true` / `--disable-auto-complete-config`: only the core fields are filled. */
  readonly strict: boolean;
  /** The model's name (its directory); defaults to the config's own `name`. */
  readonly modelName?: string;
  /** File names in the model's version directory, used to guess a missing backend (e.g. ['model.onnx']). */
  readonly modelFiles?: readonly string[];
  /** Triton's `default-max-batch-size` backend setting; 4 unless told otherwise. */
  readonly defaultMaxBatchSize?: number;
}

/** Returns a completed copy of `config`; the argument is left untouched. */
export function autoCompleteConfig(
  config: ModelConfig,
  io: ModelIoMetadata | undefined,
  options: AutoCompleteOptions,
): ModelConfig {
  const completed = clone(ModelConfigSchema, config);
  const modelName = options.modelName ?? config.name;
  if (completed.name === '') completed.name = modelName;
  fillBackendFields(completed, { modelName: completed.name, modelFiles: options.modelFiles ?? [] });
  if (options.strict || io === undefined) return completed;
  if (resolveBackendName(completed) === 'onnxruntime') {
    completeFromOnnxMetadata(completed, io, options.defaultMaxBatchSize ?? DEFAULT_MAX_BATCH_SIZE);
  }
  return completed;
}

/** True when every model tensor has a leading dynamic dimension, i.e. Triton may batch along it. */
export function modelSupportsBatching(io: ModelIoMetadata): boolean {
  const tensors = [...io.inputs, ...io.outputs];
  return tensors.length > 0 && tensors.every((tensor) => tensor.dims.length > 0 && tensor.dims[0] === -1);
}

function completeFromOnnxMetadata(config: ModelConfig, io: ModelIoMetadata, defaultMaxBatchSize: number): void {
  const canBatch = modelSupportsBatching(io);
  if (config.maxBatchSize === 0 && canBatch && !configHintsNoBatching(config, io)) {
    config.maxBatchSize = defaultMaxBatchSize;
    // Triton turns the dynamic batcher on when it picks a batch size itself and no scheduler is set.
    if (config.maxBatchSize > 1 && config.schedulingChoice.case === undefined) {
      config.schedulingChoice = { case: 'dynamicBatching', value: create(ModelDynamicBatchingSchema) };
    }
  }
  const batching = config.maxBatchSize > 0;
  completeTensors(config.input, io.inputs, batching, (tensor) => create(ModelInputSchema, tensor));
  completeTensors(config.output, io.outputs, batching, (tensor) => create(ModelOutputSchema, tensor));
}

/**
 * A config whose own dims include the batch dimension (same rank as the model tensor) says "do not
 * batch", as in Triton's hint_for_no_batch; we then leave max_batch_size at 0.
 */
function configHintsNoBatching(config: ModelConfig, io: ModelIoMetadata): boolean {
  const pairs: Array<[ModelInput | ModelOutput, readonly ModelIoTensor[]]> = [
    ...config.input.map((tensor): [ModelInput, readonly ModelIoTensor[]] => [tensor, io.inputs]),
    ...config.output.map((tensor): [ModelOutput, readonly ModelIoTensor[]] => [tensor, io.outputs]),
  ];
  return pairs.some(([tensor, modelTensors]) => {
    const model = modelTensors.find((candidate) => candidate.name === tensor.name);
    return model !== undefined && tensor.dims.length > 0 && tensor.dims.length === model.dims.length;
  });
}

function completeTensors<T extends ModelInput | ModelOutput>(
  configTensors: T[],
  modelTensors: readonly ModelIoTensor[],
  batching: boolean,
  make: (init: { name: string; dataType: DataType; dims: bigint[] }) => T,
): void {
  const configDims = (tensor: ModelIoTensor) => toBigIntDims(batching ? tensor.dims.slice(1) : tensor.dims);
  // An empty list is filled with every model tensor; a partial list only gets its gaps filled, and the
  // validator later reports tensors that the config names but the model lacks (or the reverse).
  if (configTensors.length === 0) {
    for (const tensor of modelTensors) {
      configTensors.push(make({ name: tensor.name, dataType: dataTypeOf(tensor), dims: configDims(tensor) }));
    }
    return;
  }
  for (const tensor of configTensors) {
    const model = modelTensors.find((candidate) => candidate.name === tensor.name);
    if (model === undefined) continue;
    if (tensor.dataType === 0) tensor.dataType = dataTypeOf(model);
    if (tensor.dims.length === 0) tensor.dims = configDims(model);
  }
}

function dataTypeOf(tensor: ModelIoTensor): DataType {
  try {
    return dataTypeFromName(tensor.dataType);
  } catch (error) {
    throw new TesseraError(
      'INVALID_ARG',
      `model file tensor '${tensor.name}' has an unsupported data type '${tensor.dataType}'`,
      { cause: error },
    );
  }
}
