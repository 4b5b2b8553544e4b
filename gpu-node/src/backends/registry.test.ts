import { describe, expect, it } from 'vitest';
import type { Backend } from './backend.js';
import { BackendRegistry, backendNameOf, defaultBackendRegistry, getBackend } from './registry.js';
import { modelConfig } from '../../test/support/backend-test-support.js';

const fake = (name: string): Backend => ({
  name,
  defaultModelFilename: 'model.bin',
  createInstance: () => Promise.reject(new Error('not used')),
});

describe('backend registry', () => {
  it('holds onnxruntime, onnxruntime_llm, openai and typescript by default', () => {
    expect(defaultBackendRegistry.names()).toEqual(['onnxruntime', 'onnxruntime_llm', 'openai', 'typescript']);
    expect(getBackend('onnxruntime').defaultModelFilename).toBe('model.onnx');
    expect(getBackend('typescript').defaultModelFilename).toBe('model.js');
  });

  it('names the known backends when asked for an unknown or empty one', () => {
    expect(() => getBackend('tensorrt')).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', message: "unknown backend 'tensorrt'; known backends: onnxruntime, onnxruntime_llm, openai, typescript" }),
    );
    expect(() => getBackend('')).toThrow(expect.objectContaining({ code: 'INVALID_ARG' }));
  });

  it('registers new backends and refuses a second one under the same name', () => {
    const registry = new BackendRegistry();
    registry.register(fake('identity'));
    expect(registry.get('identity').name).toBe('identity');
    expect(() => registry.register(fake('identity'))).toThrow(expect.objectContaining({ code: 'ALREADY_EXISTS' }));
    expect(() => registry.get('python')).toThrow("unknown backend 'python'; known backends: identity");
  });

  it('derives the backend name from backend or platform', () => {
    expect(backendNameOf(modelConfig({ name: 'm', backend: 'typescript' }))).toBe('typescript');
    expect(backendNameOf(modelConfig({ name: 'm', platform: 'onnxruntime_onnx' }))).toBe('onnxruntime');
    expect(() => backendNameOf(modelConfig({ name: 'm' }))).toThrow("must specify 'platform' or 'backend' for 'm'");
    expect(() => backendNameOf(modelConfig({ name: 'm', platform: 'tensorrt_plan' }))).toThrow(/platform 'tensorrt_plan' is not supported/);
  });
});
