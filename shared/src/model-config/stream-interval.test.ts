import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { ModelConfigSchema, ModelParameterSchema, type ModelConfig } from '../gen/model_config_pb.js';
import { IssueList } from './config-issues.js';
import { DEFAULT_STREAM_INTERVAL, streamIntervalOf, validateStreamInterval } from './stream-interval.js';

function config(parameters: Record<string, string>): ModelConfig {
  return create(ModelConfigSchema, {
    name: 'm',
    parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, create(ModelParameterSchema, { stringValue: v })])),
  });
}

function problems(parameters: Record<string, string>): string[] {
  const issues = new IssueList();
  validateStreamInterval(config(parameters), issues);
  return issues.issues.map((i) => `${i.field}: ${i.reason}`);
}

describe('stream interval parameters', () => {
  it('refuses zero, negative, huge, fractional and non-numeric values, naming the parameter', () => {
    for (const bad of ['0', '-1', '257', '1.5', 'abc', '1e2', ' ', '99999999999']) {
      expect(problems({ stream_interval: bad })).toEqual([`parameters.stream_interval: 'stream_interval' must be an integer in [1, 256], got '${bad.trim()}' for model 'm'`]);
    }
    expect(problems({ stream_interval_ms: '0' })[0]).toContain("'stream_interval_ms' must be an integer in [1, 10000]");
    expect(problems({ stream_interval_ms: '10001' })).toHaveLength(1);
  });

  it('takes valid values, and the node default for what the config leaves out', () => {
    expect(problems({ stream_interval: '8', stream_interval_ms: '50' })).toEqual([]);
    expect(streamIntervalOf(config({}), DEFAULT_STREAM_INTERVAL)).toBe(DEFAULT_STREAM_INTERVAL);
    expect(streamIntervalOf(config({ stream_interval: '8' }), { events: 2, maxHoldMs: 30 })).toEqual({ events: 8, maxHoldMs: 30 });
    expect(streamIntervalOf(config({ stream_interval_ms: '5' }), { events: 2, maxHoldMs: 30 })).toEqual({ events: 2, maxHoldMs: 5 });
  });
});
