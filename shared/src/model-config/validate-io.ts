/** Rules for input, output, batch_input and batch_output (section 3.4, "I/O"). */
import { DataType, ModelInput_Format } from '../gen/model_config_pb.js';
import type { ModelConfig, ModelInput, ModelOutput } from '../gen/model_config_pb.js';
import type { IssueList } from './config-issues.js';

const VARIABLE = -1n;

export function validateIo(config: ModelConfig, issues: IssueList): void {
  const m = config.name;
  config.input.forEach((tensor, index) => validateTensor(config, 'input', tensor, `input[${index}]`, issues));
  config.output.forEach((tensor, index) => validateTensor(config, 'output', tensor, `output[${index}]`, issues));
  config.input.forEach((tensor, index) => {
    if (tensor.format !== ModelInput_Format.NONE && tensor.dims.length !== 3) {
      issues.add(`input[${index}].format`, `model input '${tensor.name}' NHWC/NCHW require 3 dims for ${m}`);
    }
  });
  const tensors = [...config.input.map((t, i) => [t, `input[${i}]`] as const), ...config.output.map((t, i) => [t, `output[${i}]`] as const)];
  for (const [tensor, field] of tensors) {
    if (tensor.isShapeTensor && config.platform !== 'tensorrt_plan' && config.backend !== 'tensorrt') {
      issues.add(`${field}.is_shape_tensor`, `shape tensors are only supported for TensorRT platform for ${m}`);
    }
  }
  validateBatchIo(config, issues);
}

function validateTensor(
  config: ModelConfig,
  kind: 'input' | 'output',
  tensor: ModelInput | ModelOutput,
  field: string,
  issues: IssueList,
): void {
  const what = `model ${kind} '${tensor.name}'`;
  const m = config.name;
  if (tensor.name === '') issues.add(`${field}.name`, `model ${kind} must specify 'name' for ${m}`);
  if (tensor.dataType === DataType.TYPE_INVALID) issues.add(`${field}.data_type`, `${what} must specify 'data_type' for ${m}`);
  if (tensor.dims.length === 0 && !tensor.isShapeTensor) {
    issues.add(`${field}.dims`, `${what} must specify 'dims' for ${m}`);
  }
  if (tensor.dims.some((dim) => dim < 1n && dim !== VARIABLE)) {
    issues.add(`${field}.dims`, `${what} dimension must be integer >= 1, or -1 to indicate a variable-size dimension for ${m}`);
    return;
  }
  const reshape = tensor.reshape;
  if (reshape === undefined) return;
  if (reshape.shape.some((dim) => dim < 1n && dim !== VARIABLE)) {
    issues.add(`${field}.reshape`, `${what} reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension for ${m}`);
    return;
  }
  if (reshape.shape.length === 0 && config.maxBatchSize === 0) {
    issues.add(`${field}.reshape`, `${what} cannot have empty reshape for non-batching model as scalar tensors are not supported for ${m}`);
    return;
  }
  // Dims and reshape must have the same variable-size dimensions, and the fixed dimensions between
  // two variable ones (and before the first, after the last) must hold the same number of elements.
  const segments = (dims: readonly bigint[]) =>
    dims.reduce<bigint[]>((counts, dim) => (dim === VARIABLE ? [...counts, 1n] : [...counts.slice(0, -1), counts.at(-1)! * dim]), [1n]);
  const dimsSegments = segments(tensor.dims);
  const reshapeSegments = segments(reshape.shape);
  // Variable dims on one side only can never describe the same elements: a size mismatch, as in Triton.
  if ((dimsSegments.length === 1) !== (reshapeSegments.length === 1)) {
    issues.add(`${field}.reshape`, `${what} has different size for dims and reshape for ${m}`);
  } else if (dimsSegments.length !== reshapeSegments.length) {
    issues.add(`${field}.reshape`, `${what} has different number of variable-size dimensions for dims and reshape for ${m}`);
  } else if (dimsSegments.some((count, i) => count !== reshapeSegments[i])) {
    issues.add(`${field}.reshape`, `${what} has different size for dims and reshape for ${m}`);
  }
}

function validateBatchIo(config: ModelConfig, issues: IssueList): void {
  const inputNames = new Set(config.input.map((tensor) => tensor.name));
  const outputNames = new Set(config.output.map((tensor) => tensor.name));
  config.batchInput.forEach((batchInput, index) => {
    const field = `batch_input[${index}]`;
    const kind = batchInputKindName(batchInput.kind);
    // Every batch input kind is computed from exactly one source input, which must be a model input.
    if (batchInput.sourceInput.length !== 1) {
      issues.add(`${field}.source_input`, `batch input kind '${kind}' expects 1 source input, got ${batchInput.sourceInput.length}`);
    }
    for (const source of batchInput.sourceInput) {
      if (!inputNames.has(source)) issues.add(`${field}.source_input`, `unknown source input name '${source}'`);
    }
  });
  const targets = new Set<string>();
  config.batchOutput.forEach((batchOutput, index) => {
    const field = `batch_output[${index}]`;
    if (batchOutput.sourceInput.length !== 1) {
      issues.add(`${field}.source_input`, `batch output kind 'BATCH_SCATTER_WITH_INPUT_SHAPE' expects 1 source input, got ${batchOutput.sourceInput.length}`);
    }
    for (const source of batchOutput.sourceInput) {
      if (!inputNames.has(source)) issues.add(`${field}.source_input`, `unknown source input name '${source}'`);
    }
    for (const target of batchOutput.targetName) {
      if (!outputNames.has(target)) issues.add(`${field}.target_name`, `unknown target output name '${target}'`);
      else if (targets.has(target)) issues.add(`${field}.target_name`, `target output name '${target}' can only be specified once`);
      targets.add(target);
    }
  });
}

const BATCH_INPUT_KINDS = [
  'BATCH_ELEMENT_COUNT',
  'BATCH_ACCUMULATED_ELEMENT_COUNT',
  'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
  'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE',
  'BATCH_ITEM_SHAPE',
  'BATCH_ITEM_SHAPE_FLATTEN',
];

function batchInputKindName(kind: number): string {
  return BATCH_INPUT_KINDS[kind] ?? `KIND(${kind})`;
}
