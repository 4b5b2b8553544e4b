import { describe, expect, it } from 'vitest';
import { modelConfig } from '../../../test/support/backend-test-support.js';
import { sessionSettingsFromConfig } from './session-settings.js';

const withParameters = (parameters: Record<string, string>, level?: number) =>
  modelConfig({
    name: 'm',
    parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { stringValue: v }])),
    ...(level !== undefined ? { optimization: { graph: { level } } } : {}),
  });

describe('sessionSettingsFromConfig', () => {
  it('shares the cores among instances by default', () => {
    expect(sessionSettingsFromConfig(withParameters({}), 2, 8)).toEqual({
      intraOpNumThreads: 4,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      configEntries: { 'session.intra_op.allow_spinning': '0' },
    });
    expect(sessionSettingsFromConfig(withParameters({}), 3, 2).intraOpNumThreads).toBe(1);
  });

  it("reads Triton's onnxruntime parameters and graph level", () => {
    const config = withParameters(
      { intra_op_thread_count: '0', inter_op_thread_count: '2', execution_mode: '1', enable_mem_arena: '0', enable_mem_pattern: 'true' },
      -1,
    );
    expect(sessionSettingsFromConfig(config, 4, 8)).toEqual({
      intraOpNumThreads: 0,
      interOpNumThreads: 2,
      executionMode: 'parallel',
      graphOptimizationLevel: 'basic',
      enableCpuMemArena: false,
      enableMemPattern: true,
      configEntries: { 'session.intra_op.allow_spinning': '0' },
    });
    expect(sessionSettingsFromConfig(withParameters({}, 1), 1, 1).graphOptimizationLevel).toBe('extended');
    expect(sessionSettingsFromConfig(withParameters({}, 2), 1, 1).graphOptimizationLevel).toBe('disabled');
  });

  it('passes session.* parameters as onnxruntime config entries, spinning off unless asked for', () => {
    const config = withParameters({ 'session.intra_op.allow_spinning': '1', 'session.set_denormal_as_zero': '1', other: 'x' });
    expect(sessionSettingsFromConfig(config, 1, 2).configEntries).toEqual({
      'session.intra_op.allow_spinning': '1',
      'session.set_denormal_as_zero': '1',
    });
    expect(() => sessionSettingsFromConfig(withParameters({ 'session.x': ' ' }), 1, 1)).toThrow(/'session.x' needs a value/);
  });

  it('refuses values it cannot read, naming the parameter', () => {
    expect(() => sessionSettingsFromConfig(withParameters({ intra_op_thread_count: 'four' }), 1, 1)).toThrow(
      "model 'm': parameter 'intra_op_thread_count' must be a non-negative integer, got 'four'",
    );
    expect(() => sessionSettingsFromConfig(withParameters({ execution_mode: '2' }), 1, 1)).toThrow(/'execution_mode' must be 0/);
    expect(() => sessionSettingsFromConfig(withParameters({ enable_mem_arena: 'yes' }), 1, 1)).toThrow(/'enable_mem_arena'/);
    expect(() => sessionSettingsFromConfig(withParameters({}, 7), 1, 1)).toThrow(/optimization.graph.level 7/);
  });
});
