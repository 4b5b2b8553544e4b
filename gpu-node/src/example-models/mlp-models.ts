/**
 * Dense ReLU MLPs with seeded random weights: models whose compute is large enough that batching
 * and instance counts show up in throughput, yet generated in a second or two instead of shipped.
 *
 * Each hidden layer is Gemm(x, W[in, out], b[out]) → Relu; the last layer is a plain Gemm (logits).
 * The batch dimension is the dynamic `batch`, matching `max_batch_size > 0` in the config.
 *
 * max_batch_size: mlp_small 32, mlp_large 64. Larger batches pay off more for the large model (each
 * batch reads ~100 MB of weights once), while the small one saturates earlier; both stay small enough
 * that a full batch's tensors are a few MB at most.
 */
import { configText } from './config-text.js';
import type { ExampleModel } from './example-model.js';
import type { OnnxInitializer, OnnxNode } from './onnx-writer.js';
import { encodeModel, OnnxDataType } from './onnx-writer.js';
import { fillUniform, heUniform } from './prng.js';

export interface MlpSpec {
  readonly name: string;
  /** Layer widths, input first: [256, 1024, 1024, 10] is two hidden layers of 1024. */
  readonly sizes: readonly number[];
  readonly maxBatchSize: number;
}

export const MLP_SMALL: MlpSpec = { name: 'mlp_small', sizes: [256, 1024, 1024, 10], maxBatchSize: 32 };
export const MLP_LARGE: MlpSpec = { name: 'mlp_large', sizes: [1024, 4096, 4096, 1024], maxBatchSize: 64 };

export const DEFAULT_MLP_SEED = 42;

/** Biases are small so the weights dominate, but non-zero so a lost bias would change the outputs. */
const BIAS_LIMIT = 0.05;

export function buildMlpOnnx(spec: MlpSpec, seed = DEFAULT_MLP_SEED): Uint8Array {
  const { sizes } = spec;
  if (sizes.length < 2) throw new Error(`${spec.name}: an MLP needs at least an input and an output width`);
  const nodes: OnnxNode[] = [];
  const initializers: OnnxInitializer[] = [];
  let current = 'INPUT0';
  const layers = sizes.length - 1;
  for (let layer = 0; layer < layers; layer++) {
    const fanIn = sizes[layer] as number;
    const fanOut = sizes[layer + 1] as number;
    const last = layer === layers - 1;
    const w = `fc${layer}.weight`;
    const b = `fc${layer}.bias`;
    // Distinct seeds per tensor, derived from the model seed, so resizing one layer leaves the others' values alone.
    initializers.push({ name: w, dims: [fanIn, fanOut], data: heUniform(fanIn * fanOut, fanIn, seed * 1000 + layer * 2) });
    initializers.push({ name: b, dims: [fanOut], data: fillUniform(new Float32Array(fanOut), seed * 1000 + layer * 2 + 1, BIAS_LIMIT) });
    const gemmOut = last ? 'OUTPUT0' : `fc${layer}`;
    nodes.push({ opType: 'Gemm', name: `fc${layer}`, inputs: [current, w, b], outputs: [gemmOut] });
    if (!last) {
      nodes.push({ opType: 'Relu', name: `relu${layer}`, inputs: [gemmOut], outputs: [`relu${layer}`] });
      current = `relu${layer}`;
    }
  }
  return encodeModel({
    producerName: 'tessera-example-models',
    docString: `${spec.name}: ReLU MLP ${sizes.join('→')}, seed ${seed}`,
    graph: {
      name: spec.name,
      nodes,
      initializers,
      inputs: [{ name: 'INPUT0', elemType: OnnxDataType.FLOAT, shape: ['batch', sizes[0] as number] }],
      outputs: [{ name: 'OUTPUT0', elemType: OnnxDataType.FLOAT, shape: ['batch', sizes[layers] as number] }],
    },
  });
}

export function mlpConfigText(spec: MlpSpec): string {
  return configText({
    name: spec.name,
    platform: 'onnxruntime_onnx',
    maxBatchSize: spec.maxBatchSize,
    inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [spec.sizes[0] as number] }],
    outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [spec.sizes[spec.sizes.length - 1] as number] }],
    // Thread counts are left to the backend, which knows how many instances share the cores.
    instanceGroups: [{ count: 1, kind: 'KIND_CPU' }],
  });
}

function mlpModel(spec: MlpSpec): ExampleModel {
  return {
    name: spec.name,
    description: `FP32 ReLU MLP ${spec.sizes.join('→')}, seeded weights`,
    build: async () => [
      { path: 'config.pbtxt', contents: mlpConfigText(spec) },
      { path: '1/model.onnx', contents: buildMlpOnnx(spec) },
    ],
  };
}

export const mlpSmallModel: ExampleModel = mlpModel(MLP_SMALL);
export const mlpLargeModel: ExampleModel = mlpModel(MLP_LARGE);
