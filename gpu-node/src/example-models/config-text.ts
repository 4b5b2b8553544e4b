/**
 * Writes `config.pbtxt` text for the example models in the layout Triton's own examples use, so the
 * files read like the ones people copy from Triton's docs. Only the fields the examples need.
 */

export interface ConfigTensor {
  readonly name: string;
  /** Triton's `DataType` enum name, e.g. `TYPE_FP32`. */
  readonly dataType: string;
  /** Dims without the batch dimension; -1 is variable. */
  readonly dims: readonly number[];
}

export interface ExampleConfig {
  readonly name: string;
  /** e.g. `onnxruntime_onnx`; give this or `backend`. */
  readonly platform?: string;
  readonly backend?: string;
  readonly defaultModelFilename?: string;
  readonly maxBatchSize: number;
  readonly inputs: readonly ConfigTensor[];
  readonly outputs: readonly ConfigTensor[];
  readonly instanceGroups?: readonly { readonly count: number; readonly kind: 'KIND_CPU' | 'KIND_GPU' | 'KIND_AUTO' }[];
  /** String parameters (`parameters { key value { string_value } }`). */
  readonly parameters?: Readonly<Record<string, string>>;
}

/** A text-format string literal. The examples use plain ASCII, whose JSON escapes (quote, backslash) text format shares. */
function quote(s: string): string {
  return JSON.stringify(s);
}

function tensorList(field: 'input' | 'output', tensors: readonly ConfigTensor[]): string {
  const entries = tensors.map(
    (t) => `  {\n    name: ${quote(t.name)}\n    data_type: ${t.dataType}\n    dims: [ ${t.dims.join(', ')} ]\n  }`,
  );
  return `${field} [\n${entries.join(',\n')}\n]\n`;
}

export function configText(config: ExampleConfig): string {
  let text = `name: ${quote(config.name)}\n`;
  if (config.platform !== undefined) text += `platform: ${quote(config.platform)}\n`;
  if (config.backend !== undefined) text += `backend: ${quote(config.backend)}\n`;
  if (config.defaultModelFilename !== undefined) {
    text += `default_model_filename: ${quote(config.defaultModelFilename)}\n`;
  }
  text += `max_batch_size: ${config.maxBatchSize}\n`;
  text += tensorList('input', config.inputs);
  text += tensorList('output', config.outputs);
  if (config.instanceGroups !== undefined) {
    const groups = config.instanceGroups.map((g) => `  {\n    count: ${g.count}\n    kind: ${g.kind}\n  }`);
    text += `instance_group [\n${groups.join(',\n')}\n]\n`;
  }
  for (const [key, value] of Object.entries(config.parameters ?? {})) {
    text += `parameters {\n  key: ${quote(key)}\n  value: { string_value: ${quote(value)} }\n}\n`;
  }
  return text;
}

/** One ensemble step: the model and its tensor maps (the model's tensor name → the ensemble's tensor name). */
export interface EnsembleStep {
  readonly model: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly outputs: Readonly<Record<string, string>>;
}

/** `ensemble_scheduling { step [ … ] }`, each step on the latest version (-1). */
export function ensembleSchedulingText(steps: readonly EnsembleStep[]): string {
  const maps = (field: string, map: Readonly<Record<string, string>>) =>
    Object.entries(map).map(([key, value]) => `      ${field} { key: ${quote(key)} value: ${quote(value)} }\n`).join('');
  const entries = steps.map(
    (s) => `    {\n      model_name: ${quote(s.model)}\n      model_version: -1\n${maps('input_map', s.inputs)}${maps('output_map', s.outputs)}    }`,
  );
  return `ensemble_scheduling {\n  step [\n${entries.join(',\n')}\n  ]\n}\n`;
}
