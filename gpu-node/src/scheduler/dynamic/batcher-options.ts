/**
 * The dynamic batcher's settings as plain numbers, read once from a (normalized, validated) ModelConfig.
 * The batcher never looks at protobuf messages: int64 fields arrive as bigint or number depending on the
 * generator options, and keeping that out of the algorithm keeps the algorithm testable with literals.
 */
import { ModelQueuePolicy_TimeoutAction } from '../../../../shared/src/gen/model_config_pb.js';
import type { ModelConfig, ModelQueuePolicy } from '../../../../shared/src/gen/model_config_pb.js';

export type TimeoutAction = 'REJECT' | 'DELAY';

/** ModelQueuePolicy, one per priority level. */
export interface QueuePolicy {
  readonly timeoutAction: TimeoutAction;
  /** 0 = requests of this level never time out. */
  readonly defaultTimeoutUs: number;
  /** A request may shorten (never lengthen) its timeout with the `timeout` parameter. */
  readonly allowTimeoutOverride: boolean;
  /** Requests (not batch elements) waiting in this level; 0 = unbounded. */
  readonly maxQueueSize: number;
}

export interface DynamicBatcherOptions {
  /** The model's max_batch_size; 0 means the model does not batch, so every batch is one request. */
  readonly maxBatchSize: number;
  /** Empty means [max_batch_size], as Triton's normalization does. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
  /** 0 = a single level-0 queue; priorities are then ignored. */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicy;
  /** Policies for specific levels; other levels use `defaultQueuePolicy`. */
  readonly priorityQueuePolicy: ReadonlyMap<number, QueuePolicy>;
  /** Inputs with `allow_ragged_batch`: their shapes do not have to match within a batch. */
  readonly raggedInputs: ReadonlySet<string>;
  /**
   * Tessera's option (config parameter `queue_delay_from_idle: "true"`): the queue delay runs from the later
   * of a request's arrival and the moment an instance became free, so requests that waited while every
   * instance was busy still wait up to the delay for company (the clients just answered) instead of
   * leaving as a small batch. A request may then wait its busy time plus the delay (Triton bounds it from
   * arrival). Off by default.
   */
  readonly queueDelayFromIdle: boolean;
}

/** The config parameter that turns `queueDelayFromIdle` on. */
export const QUEUE_DELAY_FROM_IDLE_PARAMETER = 'queue_delay_from_idle';

export const DEFAULT_QUEUE_POLICY: QueuePolicy = {
  timeoutAction: 'REJECT',
  defaultTimeoutUs: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
};

/** Options with Triton's defaults for everything not given (used by tests and by callers without a config). */
export function batcherOptions(
  partial: Partial<Omit<DynamicBatcherOptions, 'defaultQueuePolicy'>> & { defaultQueuePolicy?: Partial<QueuePolicy> },
): DynamicBatcherOptions {
  return {
    maxBatchSize: partial.maxBatchSize ?? 0,
    preferredBatchSizes: partial.preferredBatchSizes ?? [],
    maxQueueDelayUs: partial.maxQueueDelayUs ?? 0,
    preserveOrdering: partial.preserveOrdering ?? false,
    priorityLevels: partial.priorityLevels ?? 0,
    defaultPriorityLevel: partial.defaultPriorityLevel ?? 0,
    defaultQueuePolicy: { ...DEFAULT_QUEUE_POLICY, ...partial.defaultQueuePolicy },
    priorityQueuePolicy: partial.priorityQueuePolicy ?? new Map(),
    raggedInputs: partial.raggedInputs ?? new Set(),
    queueDelayFromIdle: partial.queueDelayFromIdle ?? false,
  };
}

function queuePolicyFromProto(policy: ModelQueuePolicy | undefined): QueuePolicy {
  if (policy === undefined) return DEFAULT_QUEUE_POLICY;
  return {
    timeoutAction: Number(policy.timeoutAction) === ModelQueuePolicy_TimeoutAction.DELAY ? 'DELAY' : 'REJECT',
    defaultTimeoutUs: Number(policy.defaultTimeoutMicroseconds),
    allowTimeoutOverride: policy.allowTimeoutOverride,
    maxQueueSize: Number(policy.maxQueueSize),
  };
}

/** Reads `dynamic_batching` (absent → all defaults) plus the ragged inputs from a model config. */
export function batcherOptionsFromConfig(config: ModelConfig): DynamicBatcherOptions {
  const db = config.schedulingChoice.case === 'dynamicBatching' ? config.schedulingChoice.value : undefined;
  const levelPolicies = new Map<number, QueuePolicy>();
  for (const [level, policy] of Object.entries(db?.priorityQueuePolicy ?? {})) {
    levelPolicies.set(Number(level), queuePolicyFromProto(policy));
  }
  return {
    maxBatchSize: Number(config.maxBatchSize),
    preferredBatchSizes: (db?.preferredBatchSize ?? []).map(Number),
    maxQueueDelayUs: Number(db?.maxQueueDelayMicroseconds ?? 0),
    preserveOrdering: db?.preserveOrdering ?? false,
    priorityLevels: Number(db?.priorityLevels ?? 0),
    defaultPriorityLevel: Number(db?.defaultPriorityLevel ?? 0),
    defaultQueuePolicy: queuePolicyFromProto(db?.defaultQueuePolicy),
    priorityQueuePolicy: levelPolicies,
    raggedInputs: new Set(config.input.filter((i) => i.allowRaggedBatch).map((i) => i.name)),
    queueDelayFromIdle: config.parameters[QUEUE_DELAY_FROM_IDLE_PARAMETER]?.stringValue === 'true',
  };
}
