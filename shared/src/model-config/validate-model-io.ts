/**
 * Does the config agree with the model file? These are the onnxruntime backend's load-time checks
 * (names, counts, data types, dims and batching against the ONNX graph's own inputs and outputs).
 */
import type { ModelConfig, ModelInput, ModelOutput } from '../gen/model_config_pb.js';
import { modelSupportsBatching } from './auto-complete.js';
import type { IssueList } from './config-issues.js';
import { dataTypeName } from './data-types.js';
import type { ModelIoMetadata, ModelIoTensor } from './model-io-metadata.js';

export function validateAgainstModelIo(config: ModelConfig, io: ModelIoMetadata, issues: IssueList): void {
  const m = config.name;
  if (config.maxBatchSize > 0 && !modelSupportsBatching(io)) {
    issues.add('max_batch_size', `autofill failed for model '${m}': model does not support batching while non-zero max_batch_size is specified`);
    return;
  }
  checkTensors(config, 'input', config.input, io.inputs, issues, sequenceInputCount(config));
  checkTensors(config, 'output', config.output, io.outputs, issues);
}

/**
 * Model inputs the sequence batcher feeds (control inputs and implicit states), which the config does
 * not list under `input`: Triton's onnxruntime backend adds them to the count it expects.
 */
function sequenceInputCount(config: ModelConfig): number {
  if (config.schedulingChoice.case !== 'sequenceBatching') return 0;
  const sequence = config.schedulingChoice.value;
  return new Set(sequence.controlInput.map((control) => control.name)).size + sequence.state.length;
}

function checkTensors(
  config: ModelConfig,
  kind: 'input' | 'output',
  configTensors: readonly (ModelInput | ModelOutput)[],
  modelTensors: readonly ModelIoTensor[],
  issues: IssueList,
  injectedInputs = 0,
): void {
  const m = config.name;
  const allowed = modelTensors.map((tensor) => tensor.name).join(', ');
  // ONNX outputs may be a subset (the backend only fetches what the config lists); inputs may not.
  if (kind === 'input' && configTensors.length + injectedInputs !== modelTensors.length) {
    issues.add(kind, `unable to load model '${m}', configuration expects ${configTensors.length + injectedInputs} inputs, model provides ${modelTensors.length}`);
  }
  configTensors.forEach((tensor, index) => {
    const field = `${kind}[${index}]`;
    const model = modelTensors.find((candidate) => candidate.name === tensor.name);
    if (model === undefined) {
      issues.add(`${field}.name`, `unexpected inference ${kind} '${tensor.name}', allowed ${kind}s are: ${allowed}`);
      return;
    }
    if (tensor.dataType !== 0 && dataTypeName(tensor.dataType) !== model.dataType) {
      issues.add(`${field}.data_type`, `unable to load model '${m}', configuration expects datatype ${dataTypeName(tensor.dataType)} for ${kind} '${tensor.name}', model provides ${model.dataType}`);
    }
    const batching = config.maxBatchSize > 0;
    const configShape = (tensor.reshape?.shape ?? tensor.dims).map(Number);
    const fullShape = batching ? [-1, ...configShape] : configShape;
    const compatible =
      fullShape.length === model.dims.length && model.dims.every((dim, i) => dim === -1 || dim === fullShape[i]);
    if (!compatible) {
      const specified = batching
        ? `${fullShape.length} dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape [${fullShape.join(',')}])`
        : `${fullShape.length} dimensions (shape [${fullShape.join(',')}])`;
      issues.add(`${field}.dims`, `model '${m}', tensor '${tensor.name}': the model expects ${model.dims.length} dimensions (shape [${model.dims.join(',')}]) but the model configuration specifies ${specified}`);
    }
  });
}
