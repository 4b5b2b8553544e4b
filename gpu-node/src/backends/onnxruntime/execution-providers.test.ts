import { describe, expect, it } from 'vitest';
import { modelConfig } from '../../../test/support/backend-test-support.js';
import { configuredGpuProviders, gpuProviderCandidates, refuseCpuAccelerators, skippedProviderReasons } from './execution-providers.js';

const withGpuAccelerators = (...names: string[]) =>
  modelConfig({ name: 'm', optimization: { executionAccelerators: { gpuExecutionAccelerator: names.map((name) => ({ name })) } } });

describe('GPU execution provider choice', () => {
  it('tries CUDA first when its library is installed, then WebGPU', () => {
    const plain = modelConfig({ name: 'm' });
    expect(gpuProviderCandidates(plain, 0, true)).toEqual(['cuda', 'webgpu']);
    expect(gpuProviderCandidates(plain, 0, false)).toEqual(['webgpu']);
    expect(skippedProviderReasons(plain, 0, false)).toEqual(['cuda: libonnxruntime_providers_cuda.so is not installed']);
    expect(skippedProviderReasons(plain, 0, true)).toEqual([]);
  });

  it('offers WebGPU for GPU 0 only, and says why on other GPUs', () => {
    const plain = modelConfig({ name: 'm' });
    expect(gpuProviderCandidates(plain, 1, true)).toEqual(['cuda']);
    expect(gpuProviderCandidates(plain, 1, false)).toEqual([]);
    expect(skippedProviderReasons(plain, 1, false)).toEqual([
      'cuda: libonnxruntime_providers_cuda.so is not installed',
      'webgpu: it reaches only GPU 0, not GPU 1',
    ]);
  });

  it("tries exactly the config's accelerators, in its order, whatever is installed", () => {
    expect(gpuProviderCandidates(withGpuAccelerators('webgpu', 'cuda'), 0, false)).toEqual(['webgpu', 'cuda']);
    expect(gpuProviderCandidates(withGpuAccelerators('CUDA'), 0, false)).toEqual(['cuda']);
    expect(skippedProviderReasons(withGpuAccelerators('cuda'), 0, false)).toEqual([]);
    expect(configuredGpuProviders(modelConfig({ name: 'm' }))).toEqual([]);
  });

  it('refuses accelerators this build cannot run, and accelerator parameters', () => {
    expect(() => configuredGpuProviders(withGpuAccelerators('tensorrt'))).toThrow(
      "model 'm': gpu_execution_accelerator 'tensorrt' is not available; use 'cuda' or 'webgpu'",
    );
    const withParameters = modelConfig({
      name: 'm',
      optimization: { executionAccelerators: { gpuExecutionAccelerator: [{ name: 'webgpu', parameters: { precision_mode: 'FP16' } }] } },
    });
    expect(() => configuredGpuProviders(withParameters)).toThrow("gpu_execution_accelerator 'webgpu' takes no parameters (got 'precision_mode')");
    const openvino = modelConfig({ name: 'm', optimization: { executionAccelerators: { cpuExecutionAccelerator: [{ name: 'openvino' }] } } });
    expect(() => refuseCpuAccelerators(openvino)).toThrow("cpu_execution_accelerator 'openvino' is not available");
    expect(() => refuseCpuAccelerators(modelConfig({ name: 'm' }))).not.toThrow();
  });
});
