import { describe, expect, it } from 'vitest';
import { ModelInstanceGroup_Kind as Kind } from '../../../shared/src/gen/model_config_pb.js';
import { parseNvidiaSmiList } from './gpu-probe.js';
import { countInstances, expandInstanceGroups } from './instance-specs.js';
import { modelConfig } from '../../test/support/backend-test-support.js';

const noGpu = () => [];
const twoGpus = () => [0, 1];

describe('expandInstanceGroups', () => {
  it('makes count CPU instances named <group>_<i>, device -1', () => {
    const config = modelConfig({ name: 'm', instanceGroup: [{ name: 'cpus', kind: Kind.CPU, count: 2 }] });
    expect(expandInstanceGroups(config, { visibleGpus: noGpu })).toEqual([
      { name: 'cpus_0', groupName: 'cpus', kind: 'cpu', device: -1, auto: false, instanceCount: 2 },
      { name: 'cpus_1', groupName: 'cpus', kind: 'cpu', device: -1, auto: false, instanceCount: 2 },
    ]);
  });

  it('makes count instances per listed GPU, and per visible GPU when none is listed', () => {
    const listed = modelConfig({ name: 'm', instanceGroup: [{ kind: Kind.GPU, count: 2, gpus: [1, 0] }] });
    expect(expandInstanceGroups(listed, { visibleGpus: twoGpus }).map((s) => [s.name, s.kind, s.device])).toEqual([
      ['m_0_0', 'gpu', 1],
      ['m_0_1', 'gpu', 1],
      ['m_0_2', 'gpu', 0],
      ['m_0_3', 'gpu', 0],
    ]);
    const all = modelConfig({ name: 'm', instanceGroup: [{ name: 'g', kind: Kind.GPU, count: 1 }] });
    expect(expandInstanceGroups(all, { visibleGpus: twoGpus }).map((s) => s.device)).toEqual([0, 1]);
  });

  it('refuses KIND_GPU without GPUs, unknown GPU ids, and GPUs on CPU or MODEL groups', () => {
    const gpu = modelConfig({ name: 'm', instanceGroup: [{ name: 'g', kind: Kind.GPU, count: 1 }] });
    expect(() => expandInstanceGroups(gpu, { visibleGpus: noGpu })).toThrow(
      "instance group g of model 'm' has kind KIND_GPU but no GPUs are available",
    );
    const missing = modelConfig({ name: 'm', instanceGroup: [{ name: 'g', kind: Kind.GPU, gpus: [3] }] });
    expect(() => expandInstanceGroups(missing, { visibleGpus: twoGpus })).toThrow(/invalid or unsupported gpu id 3\. Visible GPUs are: 0, 1/);
    const cpu = modelConfig({ name: 'm', instanceGroup: [{ name: 'c', kind: Kind.CPU, gpus: [0] }] });
    expect(() => expandInstanceGroups(cpu, { visibleGpus: twoGpus })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARG', message: "instance group c of model 'm' has kind KIND_CPU but specifies one or more GPUs" }),
    );
  });

  it('places KIND_AUTO on the GPUs when there are any, else on the CPU, marked auto', () => {
    const auto = modelConfig({ name: 'm', instanceGroup: [{ kind: Kind.AUTO, count: 1 }] });
    expect(expandInstanceGroups(auto, { visibleGpus: noGpu })).toEqual([
      { name: 'm_0_0', groupName: 'm_0', kind: 'cpu', device: -1, auto: true, instanceCount: 1 },
    ]);
    expect(expandInstanceGroups(auto, { visibleGpus: twoGpus }).map((s) => [s.kind, s.device, s.auto])).toEqual([
      ['gpu', 0, true],
      ['gpu', 1, true],
    ]);
    const listedMissing = modelConfig({ name: 'm', instanceGroup: [{ kind: Kind.AUTO, gpus: [5] }] });
    expect(expandInstanceGroups(listedMissing, { visibleGpus: twoGpus })[0]).toMatchObject({ kind: 'cpu', auto: true });
  });

  it('marks the GPU instances of groups that were KIND_AUTO before normalization as auto', () => {
    const resolved = modelConfig({
      name: 'm',
      instanceGroup: [
        { name: 'was_auto', kind: Kind.GPU, count: 1, gpus: [0] },
        { name: 'asked_gpu', kind: Kind.GPU, count: 1, gpus: [0] },
      ],
    });
    expect(expandInstanceGroups(resolved, { visibleGpus: twoGpus, autoGroups: ['was_auto'] }).map((s) => [s.groupName, s.auto])).toEqual([
      ['was_auto', true],
      ['asked_gpu', false],
    ]);
  });

  it('treats KIND_MODEL as CPU, no groups as one KIND_AUTO instance, and count 0 as 1', () => {
    const config = modelConfig({
      name: 'm',
      instanceGroup: [
        { name: 'a', kind: Kind.MODEL, count: 0 },
        { name: 'b', kind: Kind.CPU, count: 1 },
      ],
    });
    expect(expandInstanceGroups(config).map((s) => [s.name, s.kind, s.instanceCount])).toEqual([
      ['a_0', 'cpu', 2],
      ['b_0', 'cpu', 2],
    ]);
    expect(expandInstanceGroups(modelConfig({}), { modelName: 'x', visibleGpus: noGpu })).toEqual([
      { name: 'x_0_0', groupName: 'x_0', kind: 'cpu', device: -1, auto: true, instanceCount: 1 },
    ]);
  });

  it('never probes GPUs for CPU-only configs', () => {
    const config = modelConfig({ name: 'm', instanceGroup: [{ kind: Kind.CPU, count: 3 }] });
    const probe = () => {
      throw new Error('probed');
    };
    expect(expandInstanceGroups(config, { visibleGpus: probe })).toHaveLength(3);
    expect(countInstances(config)).toBe(3);
  });
});

describe('parseNvidiaSmiList', () => {
  it('reads GPU ordinals from nvidia-smi -L', () => {
    const output = 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-5678)\n';
    expect(parseNvidiaSmiList(output)).toEqual([0, 1]);
    expect(parseNvidiaSmiList('')).toEqual([]);
  });
});
