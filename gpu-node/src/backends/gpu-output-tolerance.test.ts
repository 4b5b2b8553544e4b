import { describe, expect, it } from 'vitest';
import { DEFAULT_GPU_TOLERANCE, gpuOutputTolerance } from './gpu-output-tolerance.js';
import { modelConfig } from '../../test/support/backend-test-support.js';

const withTolerance = (text: string) => modelConfig({ name: 'm', parameters: { gpu_output_tolerance: { stringValue: text } } });

describe('gpu_output_tolerance', () => {
  it('defaults, reads numbers, and turns off', () => {
    expect(gpuOutputTolerance(modelConfig({ name: 'm' }))).toBe(DEFAULT_GPU_TOLERANCE);
    expect(gpuOutputTolerance(withTolerance(' 1e-5 '))).toBe(1e-5);
    expect(gpuOutputTolerance(withTolerance('0'))).toBe(0);
    expect(gpuOutputTolerance(withTolerance('OFF'))).toBeUndefined();
  });

  it('refuses what is not a tolerance', () => {
    for (const bad of ['-1', 'abc', 'Infinity']) {
      expect(() => gpuOutputTolerance(withTolerance(bad))).toThrow(
        `model 'm': parameter 'gpu_output_tolerance' must be a number >= 0 or "off", not '${bad}'`,
      );
    }
  });
});
