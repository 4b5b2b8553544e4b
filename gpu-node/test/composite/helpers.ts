/**
 * Helpers of the composite-model suites (ensembles, classification, warmup, optional inputs,
 * reshape): JSON inference over HTTP, and model folders written by hand where a test needs a config
 * the example writer does not produce.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface JsonOutput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
  readonly data: (number | string | boolean)[];
}

export interface JsonAnswer {
  readonly status: number;
  readonly outputs: Record<string, JsonOutput>;
  readonly error?: string;
}

export interface JsonInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly data: readonly (number | string | boolean)[];
}

/** POST /v2/models/<model>/infer with a JSON body; outputs keyed by name. */
export async function inferJson(
  base: string,
  model: string,
  inputs: readonly JsonInput[],
  outputs?: readonly { name: string; parameters?: Record<string, unknown> }[],
): Promise<JsonAnswer> {
  const response = await fetch(`${base}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputs, ...(outputs === undefined ? {} : { outputs }) }),
  });
  const body = (await response.json()) as { outputs?: JsonOutput[]; error?: string };
  return {
    status: response.status,
    outputs: Object.fromEntries((body.outputs ?? []).map((o) => [o.name, o])),
    ...(body.error === undefined ? {} : { error: body.error }),
  };
}

/** The repository index entry of a model (state and reason). */
export async function indexEntry(base: string, model: string): Promise<{ state?: string; reason?: string } | undefined> {
  const response = await fetch(`${base}/v2/repository/index`, { method: 'POST', body: '{}' });
  const entries = (await response.json()) as { name: string; state?: string; reason?: string }[];
  return entries.find((entry) => entry.name === model);
}

/** Writes `<repository>/<name>/config.pbtxt` and the given extra files (paths relative to the model folder). */
export async function writeModelFolder(
  repository: string,
  name: string,
  config: string,
  files: Readonly<Record<string, string | Uint8Array>> = {},
): Promise<void> {
  const dir = join(repository, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.pbtxt'), config);
  for (const [path, contents] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), contents);
  }
}

/** An ensemble config: FP32 [-1] tensors, max_batch_size 8, steps as pbtxt step blocks. */
export function ensembleConfig(
  name: string,
  io: { inputs: readonly string[]; outputs: readonly string[] },
  steps: readonly { model: string; inputs: Record<string, string>; outputs: Record<string, string> }[],
): string {
  const tensor = (n: string) => `  { name: "${n}" data_type: TYPE_FP32 dims: [ -1 ] }`;
  const map = (field: string, entries: Record<string, string>) =>
    Object.entries(entries).map(([k, v]) => `      ${field} { key: "${k}" value: "${v}" }`).join('\n');
  const stepText = steps
    .map((s) => `    {\n      model_name: "${s.model}"\n      model_version: -1\n${map('input_map', s.inputs)}\n${map('output_map', s.outputs)}\n    }`)
    .join(',\n');
  return [
    `name: "${name}"`,
    'platform: "ensemble"',
    'max_batch_size: 8',
    `input [\n${io.inputs.map(tensor).join(',\n')}\n]`,
    `output [\n${io.outputs.map(tensor).join(',\n')}\n]`,
    `ensemble_scheduling {\n  step [\n${stepText}\n  ]\n}`,
    '',
  ].join('\n');
}

/** An ensemble needs a version folder even though it holds no file. */
export const ENSEMBLE_VERSION_FILES = { '1/.keep': '' };
