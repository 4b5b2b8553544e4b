/**
 * Fuzzing of the config.pbtxt reader (`readModelConfig`: parse → auto-complete → normalize → validate).
 * Proves: whatever text a model repository holds, reading it either yields a frozen ModelConfig or
 * throws a TesseraError that blames the file (INVALID_ARG / UNSUPPORTED / NOT_FOUND, never INTERNAL,
 * never a stray TypeError/RangeError from a deep or odd input), and never hangs. 10,500 cases:
 * random text, token soup over the config grammar, mutated real configs (Triton's corpus when it is
 * checked out next to the repository, else built-in seeds), structurally generated configs with
 * hostile values, and deep nesting.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import { referenceData } from '../../test/support/reference-data.js';
import type { ModelIoMetadata } from './model-io-metadata.js';
import { readModelConfig } from './read-model-config.js';

const BUILT_IN_SEEDS = [
  'name: "simple"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]\n',
  'backend: "onnxruntime"\nmax_batch_size: 4\ndynamic_batching { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100 priority_levels: 2 default_priority_level: 1 }\ninstance_group [ { count: 2 kind: KIND_CPU } ]\n',
  'name: "ens"\nplatform: "ensemble"\nmax_batch_size: 1\ninput [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]\nensemble_scheduling { step [ { model_name: "a" model_version: -1 input_map { key: "X" value: "IN" } output_map { key: "Y" value: "OUT" } } ] }\n',
  'name: "seq"\nbackend: "typescript"\nmax_batch_size: 2\nsequence_batching { max_sequence_idle_microseconds: 5000000 control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] oldest { max_candidate_sequences: 4 } }\ninput [ { name: "X" data_type: TYPE_STRING dims: [ 1 ] reshape: { shape: [ ] } } ]\noutput [ { name: "Y" data_type: TYPE_FP16 dims: [ 2, 3 ] label_filename: "labels.txt" } ]\nversion_policy: { specific: { versions: [ 1, 3 ] } }\nparameters { key: "k" value: { string_value: "v" } }\n',
  'max_batch_size: 0\ninput { name: "A" data_type: TYPE_BOOL dims: [ 1, 2 ] optional: true allow_ragged_batch: true }\nmodel_warmup [ { name: "w" batch_size: 1 inputs { key: "A" value: { data_type: TYPE_BOOL dims: [ 1, 2 ] zero_data: true } } } ]\nrate_limiter { resources [ { name: "R" count: 2 } ] priority: 1 }\n',
];

/** Triton's own configs (see conformance.test.ts) when that corpus is present; else the built-in seeds. */
function seedConfigs(): string[] {
  const { path: corpus, present } = referenceData('conformance/triton-model-config', 'fuzz seeds from the Triton corpus (built-in seeds only)');
  if (!present) return BUILT_IN_SEEDS;
  const texts = readdirSync(corpus)
    .filter((name) => name.endsWith('.pbtxt'))
    .map((name) => readFileSync(path.join(corpus, name), 'utf8').replace(/^#.*\n/gm, ''));
  return [...BUILT_IN_SEEDS, ...texts];
}
const SEEDS = seedConfigs();

const FIELDS = [
  'name', 'platform', 'backend', 'max_batch_size', 'input', 'output', 'dims', 'data_type', 'format', 'reshape', 'shape',
  'instance_group', 'count', 'kind', 'gpus', 'dynamic_batching', 'preferred_batch_size', 'max_queue_delay_microseconds',
  'priority_levels', 'default_priority_level', 'default_queue_policy', 'priority_queue_policy', 'timeout_action',
  'default_timeout_microseconds', 'max_queue_size', 'sequence_batching', 'control_input', 'control', 'oldest', 'direct',
  'ensemble_scheduling', 'step', 'model_name', 'model_version', 'input_map', 'output_map', 'key', 'value', 'version_policy',
  'latest', 'num_versions', 'specific', 'versions', 'all', 'parameters', 'string_value', 'model_warmup', 'batch_size',
  'inputs', 'zero_data', 'random_data', 'input_data_file', 'optional', 'is_shape_tensor', 'label_filename',
  'default_model_filename', 'cc_model_filenames', 'optimization', 'rate_limiter', 'resources', 'priority', 'response_cache',
  'enable', 'state', 'initial_state', 'batch_input', 'batch_output', 'target_name', 'source_input', 'unknown_field',
];
const ENUMS = [
  'TYPE_FP32', 'TYPE_INT32', 'TYPE_STRING', 'TYPE_BOOL', 'TYPE_FP16', 'TYPE_BF16', 'TYPE_INVALID', 'TYPE_UINT64', 'KIND_CPU',
  'KIND_GPU', 'KIND_AUTO', 'KIND_MODEL', 'FORMAT_NCHW', 'CONTROL_SEQUENCE_START', 'REJECT', 'DELAY', 'true', 'false', 'NOPE',
];
const PUNCT = ['{', '}', '[', ']', ':', ',', ';', '<', '>', '"', "'", '#', '\n', ' ', '-', '.', '\\'];
const NUMBERS = [
  '0', '1', '-1', '8', '-2', '2147483647', '2147483648', '-2147483649', '9223372036854775807', '18446744073709551616',
  '1e309', '0x10', '1.5', '-0', 'inf', 'nan', '00', '1' + '0'.repeat(40),
];

const printable = fc.string({ unit: 'binary', maxLength: 40 });
const quoted = printable.map((s) => JSON.stringify(s));
const token = fc.oneof(
  { arbitrary: fc.constantFrom(...FIELDS), weight: 4 },
  { arbitrary: fc.constantFrom(...PUNCT), weight: 4 },
  { arbitrary: fc.constantFrom(...ENUMS), weight: 2 },
  { arbitrary: fc.constantFrom(...NUMBERS), weight: 2 },
  { arbitrary: quoted, weight: 1 },
);
const tokenSoup = fc.array(token, { maxLength: 60 }).map((t) => t.join(' '));

/** A real config with a few byte-level edits: cut, duplicated, spliced, a span replaced by tokens. */
const mutatedSeed = fc
  .record({
    seed: fc.nat({ max: SEEDS.length - 1 }),
    edits: fc.array(
      fc.record({
        kind: fc.constantFrom('cut', 'dup', 'insert', 'truncate', 'swap'),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        len: fc.nat({ max: 20 }),
        text: fc.oneof(token, printable),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ seed, edits }) => {
    let text = SEEDS[seed]!;
    for (const e of edits) {
      const at = Math.floor(e.at * text.length);
      if (e.kind === 'cut') text = text.slice(0, at) + text.slice(at + e.len);
      else if (e.kind === 'dup') text = text.slice(0, at + e.len) + text.slice(at);
      else if (e.kind === 'insert') text = text.slice(0, at) + e.text + text.slice(at);
      else if (e.kind === 'truncate') text = text.slice(0, at);
      else text = text.slice(0, at) + e.text + text.slice(at + e.len);
    }
    return text;
  });

const anyInt = fc.oneof(fc.integer({ min: -3, max: 20 }), fc.constantFrom(2147483647, -2147483648, 0));
const dims = fc.array(fc.oneof(fc.integer({ min: -2, max: 8 }), fc.constant(2147483647)), { maxLength: 4 });
const tensor = fc.record({
  name: fc.oneof(fc.constantFrom('X', 'Y', 'IN', 'OUT', ''), printable),
  type: fc.constantFrom(...ENUMS.slice(0, 8)),
  dims,
  extra: fc.constantFrom('', 'optional: true', 'reshape: { shape: [ ] }', 'reshape: { shape: [ -1, 2 ] }', 'is_shape_tensor: true', 'allow_ragged_batch: true'),
});
const tensorText = (t: { name: string; type: string; dims: number[]; extra: string }): string =>
  `{ name: ${JSON.stringify(t.name)} data_type: ${t.type} dims: [ ${t.dims.join(', ')} ] ${t.extra} }`;

/** Well-formed text with hostile values: what validation (not the parser) must refuse cleanly. */
const structured = fc
  .record({
    platform: fc.constantFrom('platform: "onnxruntime_onnx"', 'backend: "onnxruntime"', 'backend: "typescript"', 'platform: "ensemble"', 'backend: "python"', 'platform: "tensorrt_plan"', ''),
    maxBatch: anyInt,
    inputs: fc.array(tensor, { maxLength: 3 }),
    outputs: fc.array(tensor, { maxLength: 3 }),
    scheduling: fc.constantFrom(
      '',
      'dynamic_batching { }',
      'dynamic_batching { preferred_batch_size: [ 0, -1, 64 ] max_queue_delay_microseconds: 18446744073709551615 }',
      'dynamic_batching { priority_levels: 2 default_priority_level: 5 priority_queue_policy { key: 9 value: { max_queue_size: 1 } } }',
      'sequence_batching { control_input [ { name: "S" control [ { kind: CONTROL_SEQUENCE_READY fp32_false_true: [ 0 ] } ] } ] }',
      'sequence_batching { direct { max_queue_delay_microseconds: 1 } state [ { input_name: "a" output_name: "b" data_type: TYPE_FP32 dims: [ -1 ] } ] }',
      'ensemble_scheduling { step [ { model_name: "" model_version: -7 input_map { key: "" value: "" } } ] }',
      'ensemble_scheduling { step [ { model_name: "ens" model_version: -1 } ] }',
    ),
    instances: fc.array(
      fc.record({ count: anyInt, kind: fc.constantFrom('KIND_CPU', 'KIND_GPU', 'KIND_AUTO', 'KIND_MODEL'), gpus: fc.array(fc.integer({ min: -1, max: 3 }), { maxLength: 2 }) }),
      { maxLength: 2 },
    ),
    versionPolicy: fc.constantFrom('', 'version_policy: { latest: { num_versions: 0 } }', 'version_policy: { specific: { versions: [ -1, 0 ] } }', 'version_policy: { all: { } }'),
    warmup: fc.constantFrom('', 'model_warmup [ { name: "w" batch_size: 4294967295 inputs { key: "nope" value: { data_type: TYPE_STRING dims: [ 2147483647, 2147483647 ] random_data: true } } } ]'),
  })
  .map((c) =>
    [
      c.platform,
      `max_batch_size: ${c.maxBatch}`,
      c.inputs.length > 0 ? `input [ ${c.inputs.map(tensorText).join(', ')} ]` : '',
      c.outputs.length > 0 ? `output [ ${c.outputs.map(tensorText).join(', ')} ]` : '',
      c.scheduling,
      c.instances.length > 0
        ? `instance_group [ ${c.instances.map((g) => `{ count: ${g.count} kind: ${g.kind} ${g.gpus.length > 0 ? `gpus: [ ${g.gpus.join(', ')} ]` : ''} }`).join(', ')} ]`
        : '',
      c.versionPolicy,
      c.warmup,
    ].join('\n'),
  );

/** Nesting far deeper than any config, to catch recursion that blows the stack. */
const deep = fc
  .record({ depth: fc.integer({ min: 50, max: 2000 }), open: fc.constantFrom('parameters { key: "a" value: {', 'input [ {', 'dynamic_batching {', '{', '[') })
  .map(({ depth, open }) => open.repeat(depth));

const ioArb: fc.Arbitrary<ModelIoMetadata | undefined> = fc.option(
  fc.record({
    inputs: fc.array(fc.record({ name: fc.constantFrom('X', 'IN', ''), dataType: fc.constantFrom('TYPE_FP32', 'TYPE_STRING', 'TYPE_NOPE'), dims }), { maxLength: 2 }),
    outputs: fc.array(fc.record({ name: fc.constantFrom('Y', 'OUT'), dataType: fc.constantFrom('TYPE_FP32', 'TYPE_INT64'), dims }), { maxLength: 2 }),
  }),
  { nil: undefined },
);

const caseArb = fc.record({
  text: fc.oneof(
    { arbitrary: fc.string({ unit: 'binary', maxLength: 300 }), weight: 2 },
    { arbitrary: tokenSoup, weight: 3 },
    { arbitrary: mutatedSeed, weight: 5 },
    { arbitrary: structured, weight: 5 },
    { arbitrary: deep, weight: 1 },
    { arbitrary: fc.constantFrom(...BUILT_IN_SEEDS), weight: 1 },
  ),
  io: ioArb,
  strict: fc.boolean(),
  gpus: fc.constantFrom([], [0], [0, 1]),
});

describe('config.pbtxt reader fuzz', () => {
  it('returns a frozen config or throws a TesseraError blaming the file, never INTERNAL nor a crash (10,500 cases)', () => {
    const outcomes = { ok: 0, rejected: 0 };
    let slowest = 0;
    fc.assert(
      fc.property(caseArb, ({ text, io, strict, gpus }) => {
        const started = performance.now();
        try {
          const config = readModelConfig({
            text,
            fileName: 'models/fuzz/config.pbtxt',
            strict,
            gpus,
            availableBackends: ['onnxruntime', 'typescript'],
            ...(io === undefined ? {} : { io }),
          });
          expect(Object.isFrozen(config)).toBe(true);
          outcomes.ok++;
        } catch (error) {
          if (!(error instanceof TesseraError)) throw error;
          expect(error.code, error.message).not.toBe('INTERNAL');
          expect(error.message.length).toBeGreaterThan(0);
          outcomes.rejected++;
        }
        slowest = Math.max(slowest, performance.now() - started);
      }),
      { numRuns: 10_500 },
    );
    // Both sides of the reader are exercised (most hostile cases are refused, as they should be), and
    // no single input is near a hang.
    expect(outcomes.ok).toBeGreaterThan(100);
    expect(outcomes.rejected).toBeGreaterThan(1000);
    expect(slowest).toBeLessThan(5000);
  });
});
