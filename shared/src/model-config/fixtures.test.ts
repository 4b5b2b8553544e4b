/**
 * The project's own config.pbtxt fixtures (./fixtures, written for Tessera): each feature the reader
 * supports is parsed, completed, validated and checked here, so a fresh clone without the Triton
 * corpus (conformance.test.ts) still tests them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import { modelConfigToTritonJson } from './triton-json.js';
import { readModelConfig } from './read-model-config.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const BACKENDS = ['onnxruntime', 'typescript'];

function load(name: string, extra: { modelFiles?: string[] } = {}) {
  const fileName = path.join(DIR, `${name}.pbtxt`);
  const config = readModelConfig({
    text: readFileSync(fileName, 'utf8'),
    fileName,
    modelName: name,
    availableBackends: BACKENDS,
    modelFiles: extra.modelFiles ?? [],
  });
  return modelConfigToTritonJson(config) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('config fixtures of our own', () => {
  it('onnx_dynamic_batching: platform, I/O (format, optional, ragged, labels), instance groups, queue policies, latest N, parameters', () => {
    const c = load('onnx_dynamic_batching');
    expect(c).toMatchObject({ name: 'onnx_dynamic_batching', platform: 'onnxruntime_onnx', backend: 'onnxruntime', max_batch_size: 8, default_model_filename: 'net.onnx' });
    expect(c.input[0]).toMatchObject({ name: 'PIXELS', data_type: 'TYPE_FP32', format: 'FORMAT_NCHW', dims: [3, 4, 4] });
    expect(c.input[1]).toMatchObject({ name: 'MASK', data_type: 'TYPE_BOOL', optional: true, allow_ragged_batch: true });
    expect(c.output[0]).toMatchObject({ name: 'SCORES', data_type: 'TYPE_FP16', label_filename: 'labels.txt' });
    expect(c.instance_group[0]).toMatchObject({ name: 'cpu_pair', count: 2, kind: 'KIND_CPU' });
    expect(c.dynamic_batching).toMatchObject({
      preferred_batch_size: [4, 8],
      max_queue_delay_microseconds: 250,
            priority_levels: 3,
      default_priority_level: 2,
      default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 100000, allow_timeout_override: true, max_queue_size: 32 },
    });
    expect(c.dynamic_batching.priority_queue_policy[1]).toMatchObject({ timeout_action: 'DELAY', default_timeout_microseconds: 5000, max_queue_size: 4 });
    expect(c.version_policy).toEqual({ latest: { num_versions: 2 } });
    expect(c.parameters).toEqual({ intra_op_thread_count: { string_value: '2' } });
  });

  it('ts_sequence_direct: the direct sequence batcher with every control kind, all versions', () => {
    const c = load('ts_sequence_direct');
    expect(c).toMatchObject({ backend: 'typescript', max_batch_size: 4 });
    expect(c.sequence_batching.max_sequence_idle_microseconds).toBe(3000000);
    expect(c.sequence_batching.control_input.map((i: { name: string; control: { kind: string }[] }) => [i.name, i.control[0]?.kind])).toEqual([
      ['START', 'CONTROL_SEQUENCE_START'],
      ['END', 'CONTROL_SEQUENCE_END'],
      ['READY', 'CONTROL_SEQUENCE_READY'],
      ['CORRID', 'CONTROL_SEQUENCE_CORRID'],
    ]);
    expect(c.sequence_batching.direct).toMatchObject({ max_queue_delay_microseconds: 100, minimum_slot_utilization: 0.5 });
    expect(c.version_policy).toEqual({ all: {} });
  });

  it('ts_sequence_oldest: the oldest strategy, STRING input with reshape, specific versions', () => {
    const c = load('ts_sequence_oldest');
    expect(c.input[0]).toMatchObject({ name: 'TEXT', data_type: 'TYPE_STRING', dims: [1], reshape: { shape: [] } });
    expect(c.output[0]).toMatchObject({ data_type: 'TYPE_INT64', dims: [-1] });
    expect(c.sequence_batching.oldest).toMatchObject({ max_candidate_sequences: 3, preferred_batch_size: [2], max_queue_delay_microseconds: 50 });
    expect(c.version_policy).toEqual({ specific: { versions: [1, 3] } });
  });

  it('ensemble_two_steps: ensemble steps, their maps and versions', () => {
    const c = load('ensemble_two_steps');
    expect(c.platform).toBe('ensemble');
    expect(c.ensemble_scheduling.step).toEqual([
      expect.objectContaining({ model_name: 'prep', model_version: -1, input_map: { IN: 'RAW' }, output_map: { OUT: 'scaled' } }),
      expect.objectContaining({ model_name: 'head', model_version: 2, input_map: { X: 'scaled' }, output_map: { Y: 'RESULT' } }),
    ]);
  });

  it('warmup_rate_limited: no batching, rate-limiter resources, warm-up samples', () => {
    const c = load('warmup_rate_limited');
    expect(c.max_batch_size).toBe(0);
    expect(c.instance_group[0].rate_limiter).toMatchObject({
      resources: [expect.objectContaining({ name: 'R', count: 2 }), expect.objectContaining({ name: 'G', global: true, count: 1 })],
      priority: 2,
    });
    expect(c.model_warmup.map((w: { name: string }) => w.name)).toEqual(['zeros', 'random']);
    expect(c.model_warmup[0].inputs.A).toMatchObject({ data_type: 'TYPE_UINT8', dims: [2, 2], zero_data: true });
    expect(c.model_warmup[1]).toMatchObject({ count: 2 });
  });

  it('broken_syntax: refused with the file, line and column', () => {
    expect(() => load('broken_syntax')).toThrow(TesseraError);
    expect(() => load('broken_syntax')).toThrow(/broken_syntax\.pbtxt:4:\d+/);
  });

  it('broken_preferred_batch: parses, but validation refuses a preferred batch size above max_batch_size', () => {
    expect(() => load('broken_preferred_batch')).toThrow(/preferred_batch_size|preferred batch size/);
  });
});
