/**
 * Triton's defaults (NormalizeModelConfig / NormalizeInstanceGroup, section 3.3 of the protocol
 * reference), applied after auto-complete so that the served config, the /config answer and the
 * schedulers all see the same explicit values.
 */
import { clone, create } from '@bufbuild/protobuf';
import {
  ModelConfigSchema,
  ModelInstanceGroup_Kind,
  ModelInstanceGroupSchema,
  ModelOptimizationPolicy_PinnedMemoryBufferSchema,
  ModelOptimizationPolicySchema,
  ModelTransactionPolicySchema,
  ModelVersionPolicy_LatestSchema,
  ModelVersionPolicySchema,
} from '../gen/model_config_pb.js';
import type { ModelConfig, ModelInstanceGroup } from '../gen/model_config_pb.js';
import { defaultModelFilename, isEnsemble, resolveBackendName } from './backend-names.js';

/** The default `max_sequence_idle_microseconds` (1 s). */
export const DEFAULT_SEQUENCE_IDLE_MICROSECONDS = 1_000_000n;

/** Backends whose CPU instance groups default to two instances (Triton's SetDefaultInstanceCount). */
const TWO_CPU_INSTANCE_BACKENDS = new Set(['onnxruntime', 'tensorflow']);

/** Backends that ask for a CPU instance group by default, even on a GPU machine. */
const CPU_PREFERRING_BACKENDS = new Set(['openvino']);

export interface NormalizeOptions {
  /** The GPU ids this node can use; none means a CPU-only node (the default). */
  readonly gpus?: readonly number[];
}

/** Returns a normalized copy of `config`; the argument is left untouched. */
export function normalizeModelConfig(config: ModelConfig, options: NormalizeOptions = {}): ModelConfig {
  const normalized = clone(ModelConfigSchema, config);
  if (normalized.versionPolicy === undefined || normalized.versionPolicy.policyChoice.case === undefined) {
    normalized.versionPolicy = create(ModelVersionPolicySchema, {
      policyChoice: { case: 'latest', value: create(ModelVersionPolicy_LatestSchema, { numVersions: 1 }) },
    });
  }
  normalizeScheduling(normalized);
  if (isEnsemble(normalized)) {
    // Triton gives every ensemble an explicit (non-decoupled) transaction policy.
    normalized.modelTransactionPolicy ??= create(ModelTransactionPolicySchema);
  } else {
    // The backends write their default file name into the config, except the PyTorch backend.
    if (normalized.defaultModelFilename === '' && resolveBackendName(normalized) !== 'pytorch') {
      normalized.defaultModelFilename = defaultModelFilename(normalized);
    }
    normalizePinnedMemory(normalized);
    normalizeInstanceGroups(normalized, options.gpus ?? []);
  }
  return normalized;
}

function normalizeScheduling(config: ModelConfig): void {
  const scheduling = config.schedulingChoice;
  if (scheduling.case === 'dynamicBatching') {
    // No preferred sizes means "prefer full batches".
    if (scheduling.value.preferredBatchSize.length === 0 && config.maxBatchSize > 0) {
      scheduling.value.preferredBatchSize = [config.maxBatchSize];
    }
  } else if (scheduling.case === 'sequenceBatching') {
    const sequence = scheduling.value;
    if (sequence.maxSequenceIdleMicroseconds === 0n) {
      sequence.maxSequenceIdleMicroseconds = DEFAULT_SEQUENCE_IDLE_MICROSECONDS;
    }
    const strategy = sequence.strategyChoice;
    if (strategy.case === 'oldest' && strategy.value.preferredBatchSize.length === 0 && config.maxBatchSize > 0) {
      strategy.value.preferredBatchSize = [config.maxBatchSize];
    }
  }
}

function normalizePinnedMemory(config: ModelConfig): void {
  const optimization = (config.optimization ??= create(ModelOptimizationPolicySchema));
  optimization.inputPinnedMemory ??= create(ModelOptimizationPolicy_PinnedMemoryBufferSchema, { enable: true });
  optimization.outputPinnedMemory ??= create(ModelOptimizationPolicy_PinnedMemoryBufferSchema, { enable: true });
}

function normalizeInstanceGroups(config: ModelConfig, gpus: readonly number[]): void {
  const backend = resolveBackendName(config);
  if (config.instanceGroup.length === 0) {
    // The one default group is named after the model itself (no index suffix).
    const kind =
      gpus.length > 0 && !CPU_PREFERRING_BACKENDS.has(backend) ? ModelInstanceGroup_Kind.GPU : ModelInstanceGroup_Kind.CPU;
    config.instanceGroup.push(create(ModelInstanceGroupSchema, { name: config.name, kind }));
  }
  config.instanceGroup.forEach((group, index) => normalizeGroup(group, index, config.name, backend, gpus));
}

function normalizeGroup(
  group: ModelInstanceGroup,
  index: number,
  modelName: string,
  backend: string,
  gpus: readonly number[],
): void {
  if (group.name === '') group.name = `${modelName}_${index}`;
  if (group.kind === ModelInstanceGroup_Kind.AUTO) {
    const allListedPresent = group.gpus.every((gpu) => gpus.includes(gpu));
    group.kind = gpus.length > 0 && allListedPresent ? ModelInstanceGroup_Kind.GPU : ModelInstanceGroup_Kind.CPU;
  }
  if (group.kind === ModelInstanceGroup_Kind.GPU && group.gpus.length === 0) group.gpus = [...gpus];
  if (group.count === 0) {
    group.count = group.kind === ModelInstanceGroup_Kind.CPU && TWO_CPU_INSTANCE_BACKENDS.has(backend) ? 2 : 1;
  }
}
