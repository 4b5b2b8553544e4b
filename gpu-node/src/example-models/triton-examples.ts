/**
 * The rest of the example models Triton's own example clients are written against (`simple` and
 * `simple_identity` are ONNX, in simple-models.ts): string and INT8 arithmetic, the sequence models and the
 * decoupled `repeat_int32`, on the typescript backend, so those clients run unchanged against a node that
 * `npx tessera-models` set up. Each module documents what it computes.
 */
import { readFile } from 'node:fs/promises';
import type { ExampleModel } from './example-model.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

const ARITHMETIC_MODULE = new URL('./triton-arithmetic-model.js', import.meta.url);
const SEQUENCE_MODULE = new URL('./triton-sequence-model.js', import.meta.url);
const REPEAT_MODULE = new URL('./repeat-int32-model.js', import.meta.url);

interface TensorLine {
  readonly name: string;
  readonly type: string;
  readonly dims: string;
}

function tensors(field: 'input' | 'output', list: readonly TensorLine[]): string {
  return `${field} [\n${list.map((t) => `  { name: "${t.name}" data_type: ${t.type} dims: [ ${t.dims} ] }`).join(',\n')}\n]`;
}

function header(name: string, maxBatchSize: number): string {
  return `name: "${name}"\nbackend: "typescript"\ndefault_model_filename: "model.js"\nmax_batch_size: ${maxBatchSize}`;
}

function arithmeticConfig(name: string, type: string): string {
  const io = (prefix: string) => [0, 1].map((i) => ({ name: `${prefix}${i}`, type, dims: '16' }));
  return [header(name, 8), tensors('input', io('INPUT')), tensors('output', io('OUTPUT')), ''].join('\n');
}

/** A control with Triton's int32_false_true values, as its example sequence configs declare them. */
function control(name: string, kind: string): string {
  return `    { name: "${name}" control [ { kind: ${kind} int32_false_true: [ 0, 1 ] } ] }`;
}

type SequenceVariant = 'plain' | 'dyna' | 'string_dyna';

function sequenceConfig(name: string, variant: SequenceVariant): string {
  const controls = [control('START', 'CONTROL_SEQUENCE_START'), control('READY', 'CONTROL_SEQUENCE_READY')];
  if (variant !== 'plain') {
    controls.push(control('END', 'CONTROL_SEQUENCE_END'));
    const idType = variant === 'string_dyna' ? 'TYPE_STRING' : 'TYPE_UINT64';
    controls.push(`    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: ${idType} } ] }`);
  }
  return [
    header(name, 8),
    `sequence_batching {\n  max_sequence_idle_microseconds: 5000000\n  control_input [\n${controls.join(',\n')}\n  ]\n}`,
    tensors('input', [{ name: 'INPUT', type: 'TYPE_INT32', dims: '1' }]),
    tensors('output', [{ name: 'OUTPUT', type: 'TYPE_INT32', dims: '1' }]),
    'instance_group [ { count: 1 kind: KIND_CPU } ]',
    `parameters { key: "variant" value: { string_value: "${variant}" } }`,
    '',
  ].join('\n');
}

function repeatConfig(): string {
  return [
    header('repeat_int32', 0),
    'model_transaction_policy { decoupled: true }',
    tensors('input', [
      { name: 'IN', type: 'TYPE_INT32', dims: '-1' },
      { name: 'DELAY', type: 'TYPE_UINT32', dims: '-1' },
      { name: 'WAIT', type: 'TYPE_UINT32', dims: '1' },
    ]),
    tensors('output', [
      { name: 'OUT', type: 'TYPE_INT32', dims: '1' },
      { name: 'IDX', type: 'TYPE_UINT32', dims: '1' },
    ]),
    '',
  ].join('\n');
}

function typescriptModel(name: string, description: string, config: string, module: URL): ExampleModel {
  return {
    name,
    description,
    build: async () => [
      { path: 'config.pbtxt', contents: config },
      { path: '1/model.js', contents: await readFile(module, 'utf8') },
      { path: '1/package.json', contents: ESM_PACKAGE_JSON },
    ],
  };
}

export const TRITON_EXAMPLE_MODELS: readonly ExampleModel[] = [
  typescriptModel('simple_string', 'STRING [16] decimal integers → their sum and difference as strings', arithmeticConfig('simple_string', 'TYPE_STRING'), ARITHMETIC_MODULE),
  typescriptModel('simple_int8', 'INT8 [16] → sum and difference (an overflow is an error, not a wrap)', arithmeticConfig('simple_int8', 'TYPE_INT8'), ARITHMETIC_MODULE),
  typescriptModel('simple_sequence', 'sequence model: INPUT, plus 1 on a sequence start', sequenceConfig('simple_sequence', 'plain'), SEQUENCE_MODULE),
  typescriptModel('simple_dyna_sequence', 'sequence model with END and a UINT64 CORRID: adds the ID at the end', sequenceConfig('simple_dyna_sequence', 'dyna'), SEQUENCE_MODULE),
  typescriptModel(
    'simple_string_dyna_sequence',
    'sequence model with a string CORRID: running sum, plus the ID at the end',
    sequenceConfig('simple_string_dyna_sequence', 'string_dyna'),
    SEQUENCE_MODULE,
  ),
  typescriptModel('repeat_int32', 'decoupled: one response per element of IN after DELAY ms each', repeatConfig(), REPEAT_MODULE),
];
