import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataType } from '../../../shared/src/gen/model_config_pb.js';
import type { Backend, BackendInstance, ExecutionRequest, InstanceSpec, ModelSource } from '../backends/backend.js';
import { modelConfig } from '../../test/support/backend-test-support.js';
import { ModelVersion } from './model-version.js';

/** A backend whose instances claim a GPU provider and whose CPU check answers as told. */
function gpuBackend(provider: string, check: (tolerance: number) => Promise<void>) {
  const checks: { instance: string; tolerance: number; request: ExecutionRequest }[] = [];
  const backend: Backend = {
    name: 'gpu-double',
    defaultModelFilename: 'model.onnx',
    async createInstance(_source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
      const runsOn: InstanceSpec = { ...spec, provider };
      return {
        spec: runsOn,
        execute: async (requests) => ({
          results: requests.map((r) => ({ outputs: r.inputs.map((t) => ({ ...t, name: 'Y' })) })),
          timing: { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 },
        }),
        checkAgainstCpu: async (request, tolerance) => {
          checks.push({ instance: spec.name, tolerance, request });
          await check(tolerance);
        },
        close: async () => undefined,
      };
    },
  };
  return { backend, checks };
}

const gpuSpec = (name: string): InstanceSpec => ({ name, groupName: 'mlp_0', kind: 'gpu', device: 0, auto: false });

describe('GPU instances of a model version', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-gpu-instances-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const source = (parameters: Record<string, string> = {}, accelerators: string[] = []): ModelSource => ({
    name: 'mlp',
    version: 1,
    modelDir: dir,
    versionDir: dir,
    modelPath: join(dir, 'model.onnx'),
    config: modelConfig({
      name: 'mlp',
      maxBatchSize: 8,
      input: [{ name: 'X', dataType: DataType.TYPE_FP32, dims: [4n] }],
      output: [{ name: 'Y', dataType: DataType.TYPE_FP32, dims: [4n] }],
      parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { stringValue: v }])),
      optimization: { executionAccelerators: { gpuExecutionAccelerator: accelerators.map((name) => ({ name })) } },
      modelWarmup: [{ name: 'zeros', batchSize: 2, inputs: { X: { dataType: DataType.TYPE_FP32, dims: [4n], inputDataType: { case: 'zeroData', value: true } } } }],
    }),
  });

  it('checks every GPU instance against the CPU on each warmup sample, with the default tolerance', async () => {
    const { backend, checks } = gpuBackend('webgpu', async () => undefined);
    const version = new ModelVersion(source(), backend);
    await version.load([gpuSpec('mlp_0_0'), gpuSpec('mlp_0_1')]);
    expect(version.state).toBe('READY');
    expect(checks.map((c) => [c.instance, c.tolerance])).toEqual([
      ['mlp_0_0', 1e-3],
      ['mlp_0_1', 1e-3],
    ]);
    expect(checks[0]?.request.inputs[0]?.shape).toEqual([2, 4]);
  });

  it('fails the load naming the instance, the sample and the disagreement', async () => {
    const { backend } = gpuBackend('webgpu', async () => {
      throw new Error("webgpu disagrees with the CPU: output 'Y' element 3 is 1.5 on the GPU but 1 on the CPU (tolerance 0.00001)");
    });
    const version = new ModelVersion(source({ gpu_output_tolerance: '1e-5' }), backend);
    await version.load([gpuSpec('mlp_0_0')]);
    expect(version.state).toBe('UNAVAILABLE');
    expect(version.reason).toBe(
      "model instance 'mlp_0_0' failed warmup sample 'zeros': webgpu disagrees with the CPU: output 'Y' element 3 is 1.5 on the GPU but 1 on the CPU (tolerance 0.00001)",
    );
  });

  it('skips the check when the tolerance is off', async () => {
    const { backend, checks } = gpuBackend('webgpu', async () => {
      throw new Error('must not run');
    });
    const version = new ModelVersion(source({ gpu_output_tolerance: 'off' }), backend);
    await version.load([gpuSpec('mlp_0_0')]);
    expect(version.state).toBe('READY');
    expect(checks).toEqual([]);
  });

  it('answers the config with the provider it chose, and keeps a provider the config named', async () => {
    const chosen = new ModelVersion(source({ gpu_output_tolerance: 'off' }), gpuBackend('webgpu', async () => undefined).backend);
    await chosen.load([gpuSpec('mlp_0_0')]);
    expect(chosen.answeredConfig.optimization?.executionAccelerators?.gpuExecutionAccelerator.map((a) => a.name)).toEqual(['webgpu']);
    // The config the node runs with is unchanged: only the answer says where it runs.
    expect(chosen.config.optimization?.executionAccelerators?.gpuExecutionAccelerator).toEqual([]);
    expect(chosen.instanceSpecs.map((s) => s.provider)).toEqual(['webgpu']);

    const named = new ModelVersion(source({ gpu_output_tolerance: 'off' }, ['cuda', 'webgpu']), gpuBackend('cuda', async () => undefined).backend);
    await named.load([gpuSpec('mlp_0_0')]);
    expect(named.answeredConfig).toBe(named.config);
  });
});
