/**
 * Triton's classification extension (section 1.7): an output requested with `classification: K`
 * comes back as the top-K entries instead of the tensor. The result is a BYTES tensor (Triton's code
 * emits BYTES although its docs say STRING) of shape [batch, K] when the model batches and the output
 * has dimensions of its own, [K] otherwise; each element is "<value>:<index>" or, when the output has a
 * `label_filename`, "<value>:<index>:<label>". Values print like C++'s std::to_string, which Triton
 * uses: six decimals for floating-point types, plain integers otherwise.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import { encodeBytesElements, tensorToNumbers, type RequestedOutput, type Tensor } from '../../../shared/src/tensors/index.js';

/** Per output name, the labels of its `label_filename` (line i labels index i). */
export type OutputLabels = ReadonlyMap<string, readonly string[]>;

const FLOATING = new Set(['FP16', 'BF16', 'FP32', 'FP64']);

/**
 * Reads every output's `label_filename` (relative to the model folder) when a version loads, so a
 * missing label file fails the load rather than the first classification request.
 */
export async function readOutputLabels(config: ModelConfig, modelDir: string): Promise<OutputLabels> {
  const labels = new Map<string, readonly string[]>();
  for (const output of config.output) {
    if (output.labelFilename === '') continue;
    const path = join(modelDir, output.labelFilename);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw TesseraError.invalidArg(`failed to read label file '${output.labelFilename}' of output '${output.name}': ${why}`);
    }
    const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
    if (lines[lines.length - 1] === '') lines.pop();
    labels.set(output.name, lines);
  }
  return labels;
}

const wantsClassification = (output: RequestedOutput): boolean => output.classification !== undefined && output.classification > 0;

/** Replaces each output the request asked to classify with its top-K classes; others pass unchanged. */
export function applyClassification(
  outputs: readonly Tensor[],
  requested: readonly RequestedOutput[] | undefined,
  config: ModelConfig,
  labels: OutputLabels,
): readonly Tensor[] {
  // Most requests ask for no classification: answered without building the map.
  if (requested === undefined || !requested.some(wantsClassification)) return outputs;
  const counts = new Map<string, number>();
  for (const output of requested) {
    if (output.classification !== undefined && output.classification > 0) counts.set(output.name, output.classification);
  }
  if (counts.size === 0) return outputs;
  return outputs.map((tensor) => {
    const k = counts.get(tensor.name);
    if (k === undefined) return tensor;
    return classify(tensor, k, config.maxBatchSize > 0, labels.get(tensor.name));
  });
}

/** The top-`k` classes of one output tensor (per batch entry when `batching` and it has dims beyond the batch). */
export function classify(tensor: Tensor, k: number, batching: boolean, labels?: readonly string[]): Tensor {
  if (tensor.datatype === 'BYTES') {
    throw TesseraError.invalidArg(`classification is not supported for output '${tensor.name}' of datatype BYTES`);
  }
  const values = tensorToNumbers(tensor);
  const batched = batching && tensor.shape.length >= 2;
  const entries = batched ? (tensor.shape[0] as number) : 1;
  const perEntry = entries === 0 ? 0 : values.length / entries;
  const topK = Math.min(k, perEntry);
  const format = FLOATING.has(tensor.datatype) ? (v: number) => v.toFixed(6) : (v: number) => String(v);
  const elements: string[] = [];
  for (let entry = 0; entry < entries; entry++) {
    const offset = entry * perEntry;
    const order = Array.from({ length: perEntry }, (_, i) => i);
    // Stable: equal values keep ascending indices, so the answer does not depend on the sort.
    order.sort((a, b) => (values[offset + b] as number) - (values[offset + a] as number) || a - b);
    for (const index of order.slice(0, topK)) {
      const label = labels?.[index];
      const text = `${format(values[offset + index] as number)}:${index}`;
      elements.push(label === undefined || label === '' ? text : `${text}:${label}`);
    }
  }
  return {
    name: tensor.name,
    datatype: 'BYTES',
    shape: batched ? [entries, topK] : [topK],
    data: encodeBytesElements(elements),
  };
}
