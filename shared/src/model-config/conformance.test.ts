/**
 * The Triton model-config corpus (../shared/conformance/triton-model-config, see its README): every
 * config.pbtxt of Triton's server repository, the reference protobuf library's JSON for each, and, for
 * the L0_model_config fixtures, what Triton does with the model at load time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { toJson } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import { ModelConfigSchema } from '../gen/model_config_pb.js';
import { referenceData } from '../../test/support/reference-data.js';
import type { ModelIoMetadata } from './model-io-metadata.js';
import { parseModelConfigText } from './parse-text.js';
import { readModelConfig } from './read-model-config.js';

// Outside the repository: without it (a fresh clone) corpus (1) and (3) skip with one line saying so;
// fixtures.test.ts covers the reader's features with the project's own configs.
const corpus = referenceData('conformance/triton-model-config', 'model-config conformance against the Triton corpus');
const corpusDir = corpus.path;
const read = (name: string) => readFileSync(path.join(corpusDir, name), 'utf8');

/** id → the config's path in Triton's repository. */
const index = new Map(
  (corpus.present ? read('INDEX.tsv') : '')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t'))
    .map(([id, , configPath]) => [id!, configPath!]),
);
const files = corpus.present ? readdirSync(corpusDir) : [];
const ids = files.filter((name) => /^\d{4}\.pbtxt$/.test(name)).map((name) => name.slice(0, 4));

describe.skipIf(!corpus.present)('corpus (1): every config parses to the reference JSON', () => {
  it('covers the whole corpus', () => {
    expect(ids.length).toBe(index.size);
    expect(ids.length).toBe(434);
  });
  it('prints every parsed config exactly as the reference library does', () => {
    const mismatches: string[] = [];
    for (const id of ids) {
      const parsed = parseModelConfigText(read(`${id}.pbtxt`), index.get(id)!);
      const ours = toJson(ModelConfigSchema, parsed, { useProtoFieldName: true });
      const reference: unknown = JSON.parse(read(`${id}.json`));
      if (JSON.stringify(sortKeys(ours)) !== JSON.stringify(sortKeys(reference))) mismatches.push(id);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('hand-broken copies of a config fail with file, line and column', () => {
  // Our own config of the shape of Triton's `simple` example (no corpus needed).
  const original = [
    'name: "simple"',
    'platform: "onnxruntime_onnx"',
    'max_batch_size: 8',
    'input [',
    '  { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },',
    '  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }',
    ']',
    'output [',
    '  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }',
    ']',
    '',
  ].join('\n');
  const lines = original.split('\n');
  const maxBatchLine = lines.findIndex((line) => line.startsWith('max_batch_size')) + 1;
  const cases: Array<[string, string, RegExp]> = [
    ['an unknown field', original.replace('max_batch_size: 8', 'max_batch_sized: 8'), new RegExp(`:${maxBatchLine}:1 \\(field 'max_batch_sized'\\): unknown field`)],
    ['a wrong type', original.replace('max_batch_size: 8', 'max_batch_size: "eight"'), new RegExp(`:${maxBatchLine}:17 \\(field 'max_batch_size'\\): expected an integer`)],
    ['an unknown enum value', original.replace('TYPE_INT32', 'TYPE_INT33'), /:\d+:\d+ \(field 'data_type'\): unknown enum value "TYPE_INT33"/],
    ['a syntax error', original.replace('dims: [ 16 ]', 'dims: [ 16 }'), /:\d+:\d+ \(field 'dims'\): expected "," or "\]"/],
    ['a missing closing brace', original.trimEnd().replace(/\]$/, ''), /:\d+:\d+: expected "," or "\]" in list, got end of input/],
  ];
  it.each(cases)('%s', (_label, text, pattern) => {
    const fileName = 'models/simple/config.pbtxt';
    expect(() => parseModelConfigText(text, fileName)).toThrow(TesseraError);
    expect(() => parseModelConfigText(text, fileName)).toThrow(new RegExp(`^failed to parse model configuration ${fileName}${pattern.source}`));
  });
});

const sideFiles = files.filter((name) => /^\d{4}\.expected[^.]*(\.\d)?$/.test(name));
const expectedVariants = (id: string) => sideFiles.filter((name) => name.startsWith(`${id}.expected`));

/**
 * Side files (`NNNN.expected...`) we do not reproduce, with the reason. The test fails if one of these
 * starts passing (remove it from the list) or if a file that is not listed fails.
 */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  // Backend library lookup: we cannot tell a missing runtime library from a present one.
  '0285.expected': 'runtime library existence check (needs the backend directory)',
  // Python backend: its auto-complete runs the model's own auto_complete_config() in model.py.
  ...Object.fromEntries(
    ['0145', '0146', '0147', '0148', '0149', '0150', '0151', '0152', '0153', '0154', '0155', '0156', '0157', '0158', '0159', '0160', '0161', '0162', '0163'].map((id) => [`${id}.expected`, 'Python auto_complete_config() in model.py']),
  ),
  ...Object.fromEntries(
    ['0204', '0206', '0207', '0208', '0209', '0210', '0211', '0212', '0213', '0214'].flatMap((id) => expectedVariants(id)).map((name) => [name, 'Python auto_complete_config() in model.py']),
  ),
  // OpenVINO backend: auto-complete reads the model.xml network.
  ...Object.fromEntries(['0198', '0199', '0200'].flatMap((id) => expectedVariants(id)).map((name) => [name, 'OpenVINO model.xml metadata'])),
  // TensorRT-only behaviour: auto-complete from a .plan engine, its parameters and shape-tensor rules.
  ...Object.fromEntries(
    ['0217', '0218', '0219', '0220', '0221', '0222', '0223', '0224', '0225'].flatMap((id) => expectedVariants(id)).map((name) => [name, 'TensorRT engine metadata']).concat(
    ['0164', '0165', '0166', '0167', '0168', '0169', '0170', '0171', '0172', '0173', '0174', '0175', '0176', '0177', '0178', '0179', '0180', '0181', '0421'].map((id) => [`${id}.expected`, 'TensorRT engine metadata / TensorRT parameters'])),
  ),
};

/** The onnx test models' own inputs and outputs (Triton's qa models: int32 in, int8 out, 16 wide). */
const BATCHING_ONNX: ModelIoMetadata = {
  inputs: [
    { name: 'INPUT0', dataType: 'TYPE_INT32', dims: [-1, 16] },
    { name: 'INPUT1', dataType: 'TYPE_INT32', dims: [-1, 16] },
  ],
  outputs: [
    { name: 'OUTPUT0', dataType: 'TYPE_INT8', dims: [-1, 16] },
    { name: 'OUTPUT1', dataType: 'TYPE_INT8', dims: [-1, 16] },
  ],
};
const NON_BATCHING_ONNX: ModelIoMetadata = {
  inputs: BATCHING_ONNX.inputs.map((tensor) => ({ ...tensor, dims: [16] })),
  outputs: BATCHING_ONNX.outputs.map((tensor) => ({ ...tensor, dims: [16] })),
};
const MODEL_IO: Readonly<Record<string, ModelIoMetadata>> = {
  '0132': BATCHING_ONNX, '0133': NON_BATCHING_ONNX, '0134': BATCHING_ONNX, '0135': BATCHING_ONNX,
  '0136': BATCHING_ONNX, '0137': BATCHING_ONNX, '0138': BATCHING_ONNX, '0196': BATCHING_ONNX, '0197': NON_BATCHING_ONNX,
};

/** Model files Triton's harness puts next to each fixture, by the fixture's folder. */
function modelFilesFor(configPath: string): string[] {
  const folder = configPath.split('/')[3] ?? '';
  const byFolder: Record<string, string> = { onnx: 'model.onnx', tensorrt: 'model.plan', pytorch: 'model.pt', python: 'model.py', openvino: 'model.xml' };
  if (configPath.includes('/noautofill_platform/') || configPath.includes('/model_metrics/')) return ['model.onnx'];
  return byFolder[folder] === undefined ? [] : [byFolder[folder]!];
}

const BACKENDS = ['onnxruntime', 'tensorrt', 'pytorch', 'tensorflow', 'openvino', 'python', 'identity'];

function load(id: string, asEnsemble: boolean) {
  const configPath = index.get(id)!;
  let text = read(`${id}.pbtxt`);
  // Triton's harness rewrites the `platform:` line of these fixtures to each platform it tests; ours is
  // onnxruntime_onnx, and `_ensemble` answers are for the same config loaded as platform "ensemble".
  const platform = asEnsemble ? 'ensemble' : configPath.includes('/noautofill_platform/') ? 'onnxruntime_onnx' : undefined;
  if (platform !== undefined) text = `${text.replace(/^platform:.*$/m, '')}\nplatform: "${platform}"\n`;
  return readModelConfig({
    text,
    fileName: configPath,
    io: MODEL_IO[id],
    modelFiles: modelFilesFor(configPath),
    gpus: [0], // Triton's fixtures were recorded on a one-GPU machine
    availableBackends: BACKENDS,
  });
}

/** Answers that are warnings or info lines of a config that loads, not errors. */
const ACCEPTED_WITH_LOG = new Set(['0424.expected', '0425.expected', '0433.expected']);

function outcome(name: string): { ok: boolean; detail: string } {
  const id = name.slice(0, 4);
  const answer = read(name);
  const asEnsemble = name.includes('_ensemble');
  if (/^\s*name:/.test(answer)) {
    // A completed config: compare with any of the orderings Triton may print (`.expected.N.json`).
    const variants = files.filter((file) => file.startsWith(`${id}.expected`) && file.endsWith('.json'));
    let ours: unknown;
    try {
      ours = sortKeys(toJson(ModelConfigSchema, load(id, asEnsemble), { useProtoFieldName: true }));
    } catch (error) {
      return { ok: false, detail: `rejected: ${(error as Error).message}` };
    }
    const ok = variants.some((file) => JSON.stringify(sortKeys(JSON.parse(read(file)))) === JSON.stringify(ours));
    return { ok, detail: ok ? '' : `differs: ${JSON.stringify(ours)}` };
  }
  try {
    load(id, asEnsemble);
    return { ok: ACCEPTED_WITH_LOG.has(name), detail: 'accepted' };
  } catch (error) {
    // A parse failure would be a rejection for the wrong reason: the fixtures are all well-formed.
    const rejected = error instanceof TesseraError && error.code === 'INVALID_ARG' && !error.message.startsWith('failed to parse');
    return { ok: rejected && !ACCEPTED_WITH_LOG.has(name), detail: (error as Error).message };
  }
}

describe.skipIf(!corpus.present)('corpus (3): what Triton does at load time', () => {
  it('has the side files the README describes', () => {
    expect(sideFiles.length).toBeGreaterThan(250);
    for (const name of Object.keys(UNSUPPORTED)) expect(sideFiles).toContain(name);
  });
  it.each(sideFiles)('%s', (name) => {
    const { ok, detail } = outcome(name);
    if (name in UNSUPPORTED) {
      expect(ok, `${name} now passes: remove it from UNSUPPORTED`).toBe(false);
    } else {
      expect(ok, `${name}: ${read(name).slice(0, 200)}\nours: ${detail}`).toBe(true);
    }
  });
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}
