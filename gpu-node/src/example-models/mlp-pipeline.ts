/**
 * `mlp_pipeline`, the example ensemble: `mlp_preprocess` (typescript: standardize the 256 features)
 * → `mlp_small` (onnxruntime: logits over 10 classes) → `mlp_postprocess` (typescript: softmax and
 * top-3), served as one model with input INPUT FP32 [256] and outputs PROBS FP32 [3] and CLASSES
 * INT32 [3]. The three composing models are examples of their own, so a repository serving the
 * pipeline holds all four (`--only mlp_small,mlp_preprocess,mlp_postprocess,mlp_pipeline`).
 */
import { readFile } from 'node:fs/promises';
import { configText, ensembleSchedulingText } from './config-text.js';
import type { ExampleModel } from './example-model.js';
import { MLP_SMALL } from './mlp-models.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

export const MLP_PIPELINE_TOP_K = 3;
const FEATURES = MLP_SMALL.sizes[0] as number;
const CLASSES = MLP_SMALL.sizes[MLP_SMALL.sizes.length - 1] as number;

/** The composing models, in step order; the pipeline needs them in the same repository. */
export const MLP_PIPELINE_STEPS = ['mlp_preprocess', MLP_SMALL.name, 'mlp_postprocess'] as const;

function typescriptModel(name: string, description: string, moduleFile: string, config: string): ExampleModel {
  // The module's source lives next to this file, so it is linted where it is written.
  const source = new URL(moduleFile, import.meta.url);
  return {
    name,
    description,
    build: async () => [
      { path: 'config.pbtxt', contents: config },
      { path: '1/model.js', contents: await readFile(source, 'utf8') },
      { path: '1/package.json', contents: ESM_PACKAGE_JSON },
    ],
  };
}

export const mlpPreprocessModel = typescriptModel(
  'mlp_preprocess',
  `FP32 [${FEATURES}] standardized per row (mlp_pipeline step 0), typescript backend`,
  './mlp-preprocess-model.js',
  configText({
    name: 'mlp_preprocess',
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: MLP_SMALL.maxBatchSize,
    inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [FEATURES] }],
    outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [FEATURES] }],
  }),
);

export const mlpPostprocessModel = typescriptModel(
  'mlp_postprocess',
  `FP32 [${CLASSES}] logits → softmax top-${MLP_PIPELINE_TOP_K} PROBS / CLASSES (mlp_pipeline step 2), typescript backend`,
  './mlp-postprocess-model.js',
  configText({
    name: 'mlp_postprocess',
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: MLP_SMALL.maxBatchSize,
    inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [CLASSES] }],
    outputs: [
      { name: 'PROBS', dataType: 'TYPE_FP32', dims: [MLP_PIPELINE_TOP_K] },
      { name: 'CLASSES', dataType: 'TYPE_INT32', dims: [MLP_PIPELINE_TOP_K] },
    ],
    parameters: { k: String(MLP_PIPELINE_TOP_K) },
  }),
);

export function mlpPipelineConfigText(): string {
  const header = configText({
    name: 'mlp_pipeline',
    platform: 'ensemble',
    maxBatchSize: MLP_SMALL.maxBatchSize,
    inputs: [{ name: 'INPUT', dataType: 'TYPE_FP32', dims: [FEATURES] }],
    outputs: [
      { name: 'PROBS', dataType: 'TYPE_FP32', dims: [MLP_PIPELINE_TOP_K] },
      { name: 'CLASSES', dataType: 'TYPE_INT32', dims: [MLP_PIPELINE_TOP_K] },
    ],
  });
  return `${header}${ensembleSchedulingText([
    { model: 'mlp_preprocess', inputs: { INPUT0: 'INPUT' }, outputs: { OUTPUT0: 'features' } },
    { model: MLP_SMALL.name, inputs: { INPUT0: 'features' }, outputs: { OUTPUT0: 'logits' } },
    { model: 'mlp_postprocess', inputs: { INPUT0: 'logits' }, outputs: { PROBS: 'PROBS', CLASSES: 'CLASSES' } },
  ])}`;
}

export const mlpPipelineModel: ExampleModel = {
  name: 'mlp_pipeline',
  description: `ensemble: mlp_preprocess → ${MLP_SMALL.name} → mlp_postprocess (top-${MLP_PIPELINE_TOP_K} classes)`,
  build: async () => [
    { path: 'config.pbtxt', contents: mlpPipelineConfigText() },
    // An ensemble's version folder holds no model file, but it must exist for the version to be served.
    { path: '1/.keep', contents: '' },
  ],
};
