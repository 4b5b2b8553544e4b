/**
 * Writes the example models as a Triton model repository: `<out>/<name>/config.pbtxt` and
 * `<out>/<name>/1/<model file>`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ExampleModel } from './example-model.js';
import { mlpLargeModel, mlpSmallModel } from './mlp-models.js';
import { mlpPipelineModel, mlpPostprocessModel, mlpPreprocessModel } from './mlp-pipeline.js';
import { sileroVadModel } from './silero-vad.js';
import { simpleIdentityModel, simpleModel } from './simple-models.js';
import { tinyDecoderModel } from './tiny-decoder.js';
import { tokenStreamModel } from './token-stream.js';
import { TRITON_EXAMPLE_MODELS } from './triton-examples.js';
import { tsScaleModel } from './ts-scale.js';

export const EXAMPLE_MODELS: readonly ExampleModel[] = [
  simpleModel,
  simpleIdentityModel,
  mlpSmallModel,
  mlpLargeModel,
  tsScaleModel,
  sileroVadModel,
  mlpPreprocessModel,
  mlpPostprocessModel,
  mlpPipelineModel,
  tokenStreamModel,
  tinyDecoderModel,
  ...TRITON_EXAMPLE_MODELS,
];

export const EXAMPLE_MODEL_NAMES: readonly string[] = EXAMPLE_MODELS.map((m) => m.name);

export interface WriteExampleOptions {
  /** Model names to write; all of them when absent. */
  readonly only?: readonly string[];
}

export interface WrittenModel {
  readonly name: string;
  readonly dir: string;
  /** Paths relative to `dir`. */
  readonly files: readonly string[];
}

/** Picks the models named in `only` (all when absent), rejecting names that are not examples. */
export function selectExampleModels(only?: readonly string[]): readonly ExampleModel[] {
  if (only === undefined) return EXAMPLE_MODELS;
  const unknown = only.filter((name) => !EXAMPLE_MODEL_NAMES.includes(name));
  if (unknown.length > 0) {
    throw TesseraError.invalidArg(
      `unknown example model(s): ${unknown.join(', ')}; known: ${EXAMPLE_MODEL_NAMES.join(', ')}`,
    );
  }
  return EXAMPLE_MODELS.filter((m) => only.includes(m.name));
}

/**
 * Writes the selected models under `outDir`, one at a time so only one large model is in memory.
 * Idempotent: each model's folder is removed and rewritten, so files left by an older layout go too;
 * other folders in `outDir` are never touched.
 */
export async function writeExampleRepository(outDir: string, options: WriteExampleOptions = {}): Promise<WrittenModel[]> {
  const models = selectExampleModels(options.only);
  await mkdir(outDir, { recursive: true });
  const written: WrittenModel[] = [];
  for (const model of models) {
    const files = await model.build();
    const dir = join(outDir, model.name);
    await rm(dir, { recursive: true, force: true });
    for (const file of files) {
      const path = join(dir, file.path);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, file.contents);
    }
    written.push({ name: model.name, dir, files: files.map((f) => f.path) });
  }
  return written;
}
