/** Unit tests on hand-written configs: auto-complete, normalization, validation, JSON forms, helpers. */
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import { DataType, ModelConfigSchema, ModelInstanceGroup_Kind } from '../gen/model_config_pb.js';
import { autoCompleteConfig } from './auto-complete.js';
import { resolveBackendName } from './backend-names.js';
import { dataTypeToProtocol, dimsOf, protocolToDataType } from './data-types.js';
import type { ModelIoMetadata } from './model-io-metadata.js';
import { normalizeModelConfig } from './normalize.js';
import { parseModelConfigText } from './parse-text.js';
import { readModelConfig } from './read-model-config.js';
import { modelConfigFromJson, modelConfigToTritonJson } from './triton-json.js';
import { collectModelConfigIssues, validateModelConfig } from './validate.js';

const FILE = 'models/add/config.pbtxt';
const parse = (text: string) => parseModelConfigText(text, FILE);
const IO: ModelIoMetadata = {
  inputs: [{ name: 'X', dataType: 'TYPE_FP32', dims: [-1, 3] }],
  outputs: [{ name: 'Y', dataType: 'TYPE_FP32', dims: [-1, 3] }],
};

describe('data types and names', () => {
  it('maps config types to protocol types and back, STRING ↔ BYTES included', () => {
    expect(dataTypeToProtocol('TYPE_FP32')).toBe('FP32');
    expect(dataTypeToProtocol(DataType.TYPE_STRING)).toBe('BYTES');
    expect(protocolToDataType('BYTES')).toBe('TYPE_STRING');
    expect(() => dataTypeToProtocol('TYPE_INVALID')).toThrow(TesseraError);
    expect(() => protocolToDataType('FP8')).toThrow(/unknown protocol datatype 'FP8'/);
  });
  it('resolves the backend of a platform', () => {
    expect(resolveBackendName({ platform: 'onnxruntime_onnx', backend: '' })).toBe('onnxruntime');
    expect(resolveBackendName({ platform: '', backend: 'python' })).toBe('python');
    expect(resolveBackendName({ platform: 'ensemble', backend: '' })).toBe('');
  });
});

describe('autoCompleteConfig', () => {
  it('fills inputs, outputs, max_batch_size 4 and dynamic batching from a batchable ONNX model', () => {
    const done = autoCompleteConfig(parse('backend: "onnxruntime"'), IO, { strict: false, modelName: 'add' });
    expect(done.name).toBe('add');
    expect(done.platform).toBe('onnxruntime_onnx');
    expect(done.maxBatchSize).toBe(4);
    expect(done.schedulingChoice.case).toBe('dynamicBatching');
    expect(done.input.map((t) => [t.name, t.dataType, dimsOf(t)])).toEqual([['X', DataType.TYPE_FP32, [3]]]);
    expect(done.output.map((t) => dimsOf(t))).toEqual([[3]]);
  });
  it('keeps full dims and no batching for a model without a dynamic first dimension', () => {
    const io = { inputs: [{ name: 'X', dataType: 'TYPE_INT64', dims: [2, 3] }], outputs: [{ name: 'Y', dataType: 'TYPE_INT64', dims: [2] }] };
    const done = autoCompleteConfig(parse('platform: "onnxruntime_onnx"'), io, { strict: false, modelName: 'm' });
    expect(done.maxBatchSize).toBe(0);
    expect(done.schedulingChoice.case).toBeUndefined();
    expect(dimsOf(done.input[0]!)).toEqual([2, 3]);
  });
  it('treats config dims that include the batch dimension as a no-batching hint', () => {
    const config = parse('platform: "onnxruntime_onnx" input [{ name: "X" dims: [-1, 3] }]');
    expect(autoCompleteConfig(config, IO, { strict: false }).maxBatchSize).toBe(0);
  });
  it('fills only the core fields in strict mode and never mutates its argument', () => {
    const config = parse('backend: "onnxruntime"');
    const done = autoCompleteConfig(config, IO, { strict: true, modelName: 'add' });
    expect(done.input).toEqual([]);
    expect(done.platform).toBe('onnxruntime_onnx');
    expect(config.platform).toBe('');
  });
  it('finds the backend from the model file or the model name, and rejects bad pairs', () => {
    expect(autoCompleteConfig(parse(''), undefined, { strict: true, modelName: 'm', modelFiles: ['model.onnx'] }).backend).toBe('onnxruntime');
    expect(autoCompleteConfig(parse(''), undefined, { strict: true, modelName: 'm.identity' }).backend).toBe('identity');
    expect(() => autoCompleteConfig(parse(''), undefined, { strict: true, modelName: 'm' })).toThrow(/Could not determine backend/);
    expect(() => autoCompleteConfig(parse('platform: "onnxruntime_onnx" backend: "python"'), undefined, { strict: true })).toThrow(
      /unexpected 'platform' and 'backend' pair, got:onnxruntime_onnx, python/,
    );
  });
});

describe('normalizeModelConfig', () => {
  const base = 'name: "m" platform: "onnxruntime_onnx" max_batch_size: 8 input [{ name: "X" data_type: TYPE_FP32 dims: [3] }] output [{ name: "Y" data_type: TYPE_FP32 dims: [3] }]';
  it('applies Triton defaults on a CPU-only node', () => {
    const config = normalizeModelConfig(parse(`${base} dynamic_batching {}`));
    expect(config.versionPolicy?.policyChoice).toMatchObject({ case: 'latest', value: { numVersions: 1 } });
    expect(config.schedulingChoice.case === 'dynamicBatching' && config.schedulingChoice.value.preferredBatchSize).toEqual([8]);
    expect(config.defaultModelFilename).toBe('model.onnx');
    expect(config.optimization?.inputPinnedMemory?.enable).toBe(true);
    expect(config.instanceGroup.map((g) => [g.name, g.kind, g.count, g.gpus])).toEqual([['m', ModelInstanceGroup_Kind.CPU, 2, []]]);
  });
  it('names, sizes and places instance groups on a GPU node', () => {
    const config = normalizeModelConfig(parse(`${base} instance_group [{ kind: KIND_AUTO }, { kind: KIND_CPU count: 3 }]`), { gpus: [0, 1] });
    expect(config.instanceGroup.map((g) => [g.name, g.kind, g.count, g.gpus])).toEqual([
      ['m_0', ModelInstanceGroup_Kind.GPU, 1, [0, 1]],
      ['m_1', ModelInstanceGroup_Kind.CPU, 3, []],
    ]);
  });
  it('gives sequence batching its 1 s idle default and leaves ensembles without instance groups', () => {
    const sequence = normalizeModelConfig(parse(`${base} sequence_batching {}`));
    expect(sequence.schedulingChoice.case === 'sequenceBatching' && sequence.schedulingChoice.value.maxSequenceIdleMicroseconds).toBe(1_000_000n);
    const ensemble = normalizeModelConfig(parse('name: "e" platform: "ensemble"'));
    expect(ensemble.instanceGroup).toEqual([]);
    expect(ensemble.optimization).toBeUndefined();
  });
});

describe('validateModelConfig', () => {
  const valid = 'name: "m" platform: "onnxruntime_onnx" max_batch_size: 8 input [{ name: "X" data_type: TYPE_FP32 dims: [3] }] output [{ name: "Y" data_type: TYPE_FP32 dims: [3] }]';
  const issues = (text: string) => collectModelConfigIssues(normalizeModelConfig(parse(text)));
  it('accepts a valid config', () => {
    expect(issues(valid)).toEqual([]);
  });
  it('names the file, field and reason, and reports all findings on request', () => {
    const config = normalizeModelConfig(parse(valid.replace('max_batch_size: 8', 'max_batch_size: 2 dynamic_batching { preferred_batch_size: [4] }').replace('dims: [3]', 'dims: [0]')));
    expect(() => validateModelConfig(config, { fileName: FILE })).toThrow(
      `invalid model configuration ${FILE}: input[0].dims: model input 'X' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for m (and 1 more)`,
    );
    expect(() => validateModelConfig(config, { fileName: FILE, allErrors: true })).toThrow(/dynamic_batching.preferred_batch_size: dynamic batching preferred size must be <= max batch size for m/);
  });
  it.each([
    ['queue priorities', 'dynamic_batching { priority_levels: 3 }', /default priority level must be in range \[1, 3\]/],
    ['preserve ordering with DELAY', 'dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 10 } }', /DELAY/],
    ['CORRID without data type', 'sequence_batching { control_input [{ name: "C" control [{ kind: CONTROL_SEQUENCE_CORRID }] }] }', /TYPE_UINT64/],
    ['cache with sequences', 'sequence_batching {} response_cache { enable: true }', /Response Cache does not currently support/],
    ['GPU group on a CPU node', 'instance_group [{ kind: KIND_GPU }]', /has kind KIND_GPU but no GPUs are available/],
    ['reshape size', 'input [{ name: "Z" data_type: TYPE_FP32 dims: [4] reshape { shape: [3] } }]', /different size for dims and reshape/],
  ])('rejects %s', (_label, extra, pattern) => {
    expect(issues(`${valid} ${extra}`).map((issue) => issue.reason).join('\n')).toMatch(pattern);
  });
  it('checks the config against the model file when given its metadata', () => {
    const config = normalizeModelConfig(parse(valid.replace('name: "X"', 'name: "Q"')));
    expect(collectModelConfigIssues(config, { io: IO }).map((issue) => issue.reason)).toContain("unexpected inference input 'Q', allowed inputs are: X");
  });
});

describe('readModelConfig', () => {
  it('parses, completes, normalizes, validates and freezes', () => {
    const config = readModelConfig({ text: 'backend: "onnxruntime"', fileName: FILE, io: IO });
    expect(config.name).toBe('add');
    expect(config.maxBatchSize).toBe(4);
    expect(Object.isFrozen(config) && Object.isFrozen(config.input[0])).toBe(true);
    expect(() => readModelConfig({ text: 'backend: "onnxruntime" max_batch_size: -1', fileName: FILE, strict: true })).toThrow(/max_batch_size/);
  });
});

describe('JSON forms', () => {
  it('renders /config with snake_case names, defaults printed, enums by name and 64-bit numbers', () => {
    const config = readModelConfig({ text: 'backend: "onnxruntime" dynamic_batching { max_queue_delay_microseconds: 100 }', fileName: FILE, io: IO });
    const json = modelConfigToTritonJson(config) as Record<string, unknown>;
    expect(json.input).toEqual([expect.objectContaining({ name: 'X', data_type: 'TYPE_FP32', dims: [3], optional: false, format: 'FORMAT_NONE' })]);
    expect(json.dynamic_batching).toMatchObject({ max_queue_delay_microseconds: 100, preferred_batch_size: [4] });
    expect(json.instance_group).toEqual([expect.objectContaining({ kind: 'KIND_CPU', count: 2 })]);
    expect(json.runtime).toBe('');
  });
  it('reads the load API config in either case style with case-insensitive enums and rejects unknown fields', () => {
    const config = modelConfigFromJson('{"name":"m","maxBatchSize":2,"input":[{"name":"X","data_type":"type_fp32","dims":[3]}]}');
    expect(config.maxBatchSize).toBe(2);
    expect(config.input[0]?.dataType).toBe(DataType.TYPE_FP32);
    expect(() => modelConfigFromJson('{"nmae":"m"}')).toThrow(/invalid model configuration JSON/);
    expect(() => modelConfigFromJson('{')).toThrow(TesseraError);
    expect(create(ModelConfigSchema).name).toBe('');
  });
});
