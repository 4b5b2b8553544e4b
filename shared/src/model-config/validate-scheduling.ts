/** Rules for dynamic_batching, sequence_batching and their combinations (section 3.4). */
import {
  DataType,
  ModelQueuePolicy_TimeoutAction,
  ModelSequenceBatching_Control_Kind,
} from '../gen/model_config_pb.js';
import type { ModelConfig, ModelDynamicBatching, ModelQueuePolicy, ModelSequenceBatching } from '../gen/model_config_pb.js';
import type { IssueList } from './config-issues.js';

export function validateScheduling(config: ModelConfig, issues: IssueList): void {
  const scheduling = config.schedulingChoice;
  if (scheduling.case === 'dynamicBatching') validateDynamicBatching(config, scheduling.value, issues);
  if (scheduling.case === 'sequenceBatching') validateSequenceBatching(config, scheduling.value, issues);
  if (config.responseCache?.enable) {
    if (scheduling.case === 'sequenceBatching') {
      issues.add('response_cache', `Response Cache does not currently support model ${config.name} with sequence batching scheduler`);
    }
    if (config.modelTransactionPolicy?.decoupled) {
      issues.add('response_cache', `Response Cache does not currently support model ${config.name} with 'decoupled' transaction policy`);
    }
  }
}

function validateDynamicBatching(config: ModelConfig, batching: ModelDynamicBatching, issues: IssueList): void {
  const m = config.name;
  const field = 'dynamic_batching';
  for (const size of batching.preferredBatchSize) {
    if (size < 1) issues.add(`${field}.preferred_batch_size`, `dynamic batching preferred size must be positive for ${m}`);
    else if (size > config.maxBatchSize) {
      issues.add(`${field}.preferred_batch_size`, `dynamic batching preferred size must be <= max batch size for ${m}`);
    }
  }
  const levels = batching.priorityLevels;
  if (levels !== 0n) {
    if (batching.defaultPriorityLevel < 1n || batching.defaultPriorityLevel > levels) {
      issues.add(`${field}.default_priority_level`, `default priority level must be in range [1, ${levels}] for ${m}`);
    }
    for (const key of Object.keys(batching.priorityQueuePolicy)) {
      const level = BigInt(key);
      if (level < 1n || level > levels) {
        issues.add(`${field}.priority_queue_policy`, `priority queue policy must have priority level in range [1, ${levels}] for ${m}`);
      }
    }
  }
  if (batching.preserveOrdering) {
    if (levels > 1n) {
      issues.add(`${field}.preserve_ordering`, `Only one priority level is allowed when 'preserve_ordering' is true for ${m}`);
    }
    // A DELAY policy only reorders requests when it has a timeout to act on.
    const delays = (policy: ModelQueuePolicy | undefined) =>
      policy !== undefined &&
      policy.timeoutAction === ModelQueuePolicy_TimeoutAction.DELAY &&
      policy.defaultTimeoutMicroseconds !== 0n;
    if (delays(batching.defaultQueuePolicy) || Object.values(batching.priorityQueuePolicy).some(delays)) {
      issues.add(`${field}.preserve_ordering`, `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${m}`);
    }
  }
}

const CORRID_TYPES = new Set([DataType.TYPE_UINT64, DataType.TYPE_INT64, DataType.TYPE_UINT32, DataType.TYPE_INT32, DataType.TYPE_STRING]);

function validateSequenceBatching(config: ModelConfig, sequence: ModelSequenceBatching, issues: IssueList): void {
  const m = config.name;
  const field = 'sequence_batching';
  const kindTensors = new Map<ModelSequenceBatching_Control_Kind, string[]>();
  const tensorKinds = new Map<string, Set<ModelSequenceBatching_Control_Kind>>();
  for (const controlInput of sequence.controlInput) {
    const kinds = tensorKinds.get(controlInput.name) ?? new Set();
    controlInput.control.forEach((control) => kinds.add(control.kind));
    tensorKinds.set(controlInput.name, kinds);
    for (const control of controlInput.control) {
      const kindName = ModelSequenceBatching_Control_Kind[control.kind] ?? String(control.kind);
      kindTensors.set(control.kind, [...(kindTensors.get(control.kind) ?? []), controlInput.name]);
      const pairs = [control.int32FalseTrue, control.fp32FalseTrue, control.boolFalseTrue].filter((pair) => pair.length > 0);
      if (control.kind === ModelSequenceBatching_Control_Kind.CONTROL_SEQUENCE_CORRID) {
        if (pairs.length > 0) {
          issues.add(`${field}.control_input`, `sequence batching must not specify a '*_false_true' value for ${kindName} for ${m}`);
        }
        if (!CORRID_TYPES.has(control.dataType)) {
          issues.add(`${field}.control_input`, `sequence batching must specify 'data_type' of TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING for ${kindName} for ${m}`);
        }
      } else if (pairs.length !== 1) {
        issues.add(`${field}.control_input`, `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kindName} for ${m}`);
      } else if (pairs[0]!.length !== 2) {
        issues.add(`${field}.control_input`, `sequence batching control '${kindName}' must have exactly 2 entries in '*_false_true' for ${m}`);
      }
    }
  }
  for (const [name, kinds] of tensorKinds) {
    if (kinds.size > 1) {
      issues.add(`${field}.control_input`, `sequence batching control tensor '${name}' is specified for multiple control kinds for ${m}`);
    }
  }
  for (const [kind, tensors] of kindTensors) {
    if (tensors.length > 1) {
      issues.add(`${field}.control_input`, `sequence batching specifies multiple ${ModelSequenceBatching_Control_Kind[kind]} tensors for ${m}`);
    }
  }
  const strategy = sequence.strategyChoice;
  if (strategy.case === 'direct') {
    const utilization = strategy.value.minimumSlotUtilization;
    if (utilization < 0 || utilization > 1) {
      issues.add(`${field}.direct.minimum_slot_utilization`, `minimum slot utilization must be in range (0.0, 1.0] for ${m}`);
    }
  } else if (strategy.case === 'oldest') {
    for (const size of strategy.value.preferredBatchSize) {
      if (size < 1 || size > config.maxBatchSize) {
        issues.add(`${field}.oldest.preferred_batch_size`, `sequence batching preferred batch size must be positive and <= max batch size for ${m}`);
      }
    }
  }
}
