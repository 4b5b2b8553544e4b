/**
 * The single place that decides which scheduler a model version gets, from its config (Triton's
 * scheduling_choice): dynamic_batching gets Triton's dynamic batcher; no scheduling choice gets the
 * default scheduler (one request per execution, no queue policy); sequence_batching gets Triton's
 * sequence batcher (slots, backlog, control inputs, implicit state); ensemble_scheduling gets what
 * the registry holds for it: the ensemble scheduler, registered by the repository manager, which has
 * no instances of its own and runs each step on its composing model.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance } from '../backends/backend.js';
import { DefaultScheduler } from './default-scheduler.js';
import type { BatcherObserver } from './dynamic/batcher-observer.js';
import { DynamicBatchScheduler } from './dynamic/dynamic-batch-scheduler.js';
import type { RateLimitedInstance, RateLimiter } from './dynamic/rate-limiter.js';
import type { SchedulerRegistry } from './scheduler-registry.js';
import type { ExecutionObserver, Scheduler } from './scheduler.js';
import { SequenceBatchScheduler } from './sequence/sequence-batch-scheduler.js';

export interface SchedulerHooks {
  /** Told once per finished execution (batch_stats, execution count, the exec-time EMA). */
  readonly execution?: ExecutionObserver;
  /** Queue events of either scheduler (pending gauge, REJECTED and CANCELED failures). */
  readonly queue?: BatcherObserver;
  /**
   * `--rate-limit=execution_count`: the node's one limiter. Absent (`off`): instances take work as
   * soon as they are idle. Only the dynamic batcher goes through it so far.
   */
  readonly rateLimiter?: RateLimiter;
  /** `<repository>/<model>`: where a sequence batcher finds `initial_state` data files. */
  readonly modelDir?: string;
  /** Schedulers registered by name from outside scheduler/ (the ensemble scheduler). */
  readonly schedulers?: SchedulerRegistry;
}

export function createScheduler(
  config: ModelConfig,
  instances: readonly BackendInstance[],
  hooks: SchedulerHooks = {},
): Scheduler {
  const choice = config.schedulingChoice.case;
  switch (choice) {
    case 'dynamicBatching':
      return dynamicScheduler(config, instances, hooks);
    case 'sequenceBatching':
      return new SequenceBatchScheduler(config, instances, hooks.execution, {
        ...(hooks.queue === undefined ? {} : { queueObserver: hooks.queue }),
        ...(hooks.modelDir === undefined ? {} : { modelDir: hooks.modelDir }),
      });
    case undefined:
      return new DefaultScheduler(instances, hooks.execution, hooks.queue);
    case 'ensembleScheduling': {
      const factory = hooks.schedulers?.get(choice);
      if (!factory) throw TesseraError.internal(`ensemble '${config.name}' cannot reach its composing models`);
      return factory(config, instances);
    }
  }
}

function dynamicScheduler(config: ModelConfig, instances: readonly BackendInstance[], hooks: SchedulerHooks): Scheduler {
  const limiter = hooks.rateLimiter;
  const gate = limiter?.register(rateLimitedInstances(config, instances));
  try {
    return new DynamicBatchScheduler(config, instances, hooks.execution, {
      ...(hooks.queue === undefined ? {} : { batcherObserver: hooks.queue }),
      ...(gate === undefined
        ? {}
        : {
            gate,
            // Once stopped, nothing of this version waits or runs: leave the limiter so an unloaded
            // model is neither staged nor counted in the pools' sizes.
            onStopped: () => limiter?.unregister(gate),
          }),
    });
  } catch (error) {
    if (gate !== undefined) limiter?.unregister(gate);
    throw error;
  }
}

/**
 * The limiter's view of each instance, in the batcher's order: the `rate_limiter` of the instance
 * group it came from (matched by group name, named as instance-specs.ts names groups).
 */
export function rateLimitedInstances(config: ModelConfig, instances: readonly BackendInstance[]): RateLimitedInstance[] {
  const groups = new Map(config.instanceGroup.map((group, index) => [group.name || `${config.name}_${index}`, group]));
  return instances.map((instance) => {
    const limits = groups.get(instance.spec.groupName)?.rateLimiter;
    return {
      resources: (limits?.resources ?? []).map((r) => ({ name: r.name, global: r.global, count: r.count })),
      priority: limits?.priority ?? 0,
      device: instance.spec.device,
    };
  });
}
