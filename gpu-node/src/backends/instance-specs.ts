/**
 * Instance groups → the instances to create, following Triton's rules (triton-protocol.md §3.3, §8):
 *
 * - `count` instances per group (unset or 0 → 1), per listed GPU for GPU groups.
 * - KIND_GPU: one set per GPU in `gpus`, or per visible GPU when `gpus` is empty; device = ordinal.
 *   No GPU at all, or a listed GPU that is not visible, fails the load with INVALID_ARG.
 * - KIND_CPU, KIND_MODEL: CPU instances (device -1); listing GPUs is INVALID_ARG. KIND_MODEL leaves
 *   placement to the backend, and ours place on the CPU.
 * - KIND_AUTO: GPU instances when a GPU is visible and every listed GPU exists, else CPU; `auto: true`
 *   either way, so a backend that cannot use the GPU may fall back to the CPU.
 * - No groups at all: one KIND_AUTO group of one instance.
 *
 * Group names default to `<model>_<group index>`; instance names are `<group>_<index in group>`.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import { ModelInstanceGroup_Kind, type ModelConfig, type ModelInstanceGroup } from '../../../shared/src/gen/model_config_pb.js';
import type { InstanceSpec } from './backend.js';
import { nvidiaSmiGpus, type GpuProbe } from './gpu-probe.js';

export interface ExpandOptions {
  /** Used when the config's name is empty. */
  readonly modelName?: string;
  /** Default: nvidia-smi -L, cached. */
  readonly visibleGpus?: GpuProbe;
  /**
   * Names of groups the config left to KIND_AUTO before normalization resolved them to KIND_GPU
   * (ModelPlatform's autoGroups): their instances are `auto` too, so they may fall back to the CPU.
   */
  readonly autoGroups?: readonly string[];
}

interface Placement {
  readonly kind: 'cpu' | 'gpu';
  readonly devices: readonly number[];
  readonly auto: boolean;
}

function place(group: ModelInstanceGroup, groupName: string, model: string, visible: () => readonly number[]): Placement {
  const where = `instance group ${groupName} of model '${model}'`;
  switch (group.kind) {
    case ModelInstanceGroup_Kind.CPU:
    case ModelInstanceGroup_Kind.MODEL:
      if (group.gpus.length > 0) {
        const kind = group.kind === ModelInstanceGroup_Kind.CPU ? 'KIND_CPU' : 'KIND_MODEL';
        throw TesseraError.invalidArg(`${where} has kind ${kind} but specifies one or more GPUs`);
      }
      return { kind: 'cpu', devices: [-1], auto: false };
    case ModelInstanceGroup_Kind.GPU: {
      const gpus = visible();
      if (gpus.length === 0) throw TesseraError.invalidArg(`${where} has kind KIND_GPU but no GPUs are available`);
      for (const id of group.gpus) {
        if (!gpus.includes(id)) {
          throw TesseraError.invalidArg(
            `${where} specifies invalid or unsupported gpu id ${id}. Visible GPUs are: ${gpus.join(', ')}`,
          );
        }
      }
      return { kind: 'gpu', devices: group.gpus.length > 0 ? group.gpus : gpus, auto: false };
    }
    default: {
      // KIND_AUTO (and any unknown value, which protobuf keeps as a number).
      const gpus = visible();
      const usable = gpus.length > 0 && group.gpus.every((id) => gpus.includes(id));
      if (!usable) return { kind: 'cpu', devices: [-1], auto: true };
      return { kind: 'gpu', devices: group.gpus.length > 0 ? group.gpus : gpus, auto: true };
    }
  }
}

export function expandInstanceGroups(config: ModelConfig, options: ExpandOptions = {}): InstanceSpec[] {
  const model = config.name || options.modelName || 'model';
  const probe = options.visibleGpus ?? nvidiaSmiGpus;
  let gpus: readonly number[] | undefined;
  // Probe only when a group can use a GPU: CPU-only configs never run nvidia-smi.
  const visible = (): readonly number[] => (gpus ??= probe());
  const groups: readonly Pick<ModelInstanceGroup, 'name' | 'kind' | 'count' | 'gpus'>[] =
    config.instanceGroup.length > 0 ? config.instanceGroup : [{ name: '', kind: ModelInstanceGroup_Kind.AUTO, count: 1, gpus: [] }];

  const specs: Omit<InstanceSpec, 'instanceCount'>[] = [];
  groups.forEach((group, groupIndex) => {
    const groupName = group.name || `${model}_${groupIndex}`;
    const placed = place(group as ModelInstanceGroup, groupName, model, visible);
    const placement = options.autoGroups?.includes(groupName) ? { ...placed, auto: true } : placed;
    const count = group.count > 0 ? group.count : 1;
    let index = 0;
    for (const device of placement.devices) {
      for (let i = 0; i < count; i++) {
        specs.push({ name: `${groupName}_${index++}`, groupName, kind: placement.kind, device, auto: placement.auto });
      }
    }
  });
  return specs.map((spec) => ({ ...spec, instanceCount: specs.length }));
}

/**
 * The number of instances a config asks for, without probing GPUs (an empty `gpus` list counts as one
 * GPU). Backends use it to share cores when a spec does not carry instanceCount.
 */
export function countInstances(config: ModelConfig): number {
  if (config.instanceGroup.length === 0) return 1;
  return config.instanceGroup.reduce((sum, g) => sum + Math.max(1, g.count) * Math.max(1, g.gpus.length), 0);
}
