/**
 * The node's `Scheduler` for models with `dynamic_batching`: adapts ScheduledRequest / BackendInstance to
 * the generic DynamicBatcher, reads the schedule-policy parameters (`priority`, `timeout`) from the
 * request, and reports each request's queue time and its execution's timing as the stats need them.
 */
import type { BackendInstance, ExecutionRequest } from '../../backends/backend.js';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';
import type { ExecutionObserver, ScheduledRequest, ScheduledResult, Scheduler } from '../scheduler.js';
import { batcherOptionsFromConfig } from './batcher-options.js';
import type { BatcherObserver } from './batcher-observer.js';
import { schedulingParameter } from './batcher-request.js';
import { realClock } from './clock.js';
import type { Clock } from './clock.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import type { BatchExecutor } from './dynamic-batcher.js';
import type { InstanceGateFactory } from './instance-gate.js';

export interface DynamicBatchSchedulerExtras {
  readonly clock?: Clock;
  /** Queue-level events (rejections, cancellations, batch sizes) for the stats module. */
  readonly batcherObserver?: BatcherObserver;
  /** `--rate-limit=execution_count`: `rateLimiter.register(instanceLimits)`. */
  readonly gate?: InstanceGateFactory;
  /** Called once, when stop() has drained the batcher (e.g. to unregister from the rate limiter). */
  readonly onStopped?: () => void;
}

export class DynamicBatchScheduler implements Scheduler {
  private readonly batcher: DynamicBatcher<ExecutionRequest, ScheduledResult>;
  private readonly clock: Clock;
  private readonly onStopped: (() => void) | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    config: ModelConfig,
    instances: readonly BackendInstance[],
    observer?: ExecutionObserver,
    extras: DynamicBatchSchedulerExtras = {},
  ) {
    const clock = extras.clock ?? realClock;
    this.clock = clock;
    this.onStopped = extras.onStopped;
    const executors = instances.map(
      (instance): BatchExecutor<ExecutionRequest, ScheduledResult> => ({
        async execute(executions, queued) {
          const startUs = clock.now();
          const batch = await instance.execute(executions);
          observer?.executionFinished(
            queued.reduce((sum, q) => sum + q.batchSize, 0),
            batch.timing,
          );
          return {
            results: batch.results.map((result, i) => ({
              result,
              queueNs: Math.round((startUs - (queued[i]?.enqueuedUs ?? startUs)) * 1000),
              timing: batch.timing,
            })),
            timing: batch.timing,
          };
        },
      }),
    );
    this.batcher = new DynamicBatcher({
      options: batcherOptionsFromConfig(config),
      instances: executors,
      clock,
      ...(extras.batcherObserver !== undefined ? { observer: extras.batcherObserver } : {}),
      ...(extras.gate !== undefined ? { gate: extras.gate } : {}),
    });
  }

  /** `id` is optional: when the core passes the client's request id, queue-full errors name it. */
  enqueue(request: ScheduledRequest & { readonly id?: string }): Promise<ScheduledResult> {
    const execution = request.execution;
    // The execution is the payload itself; the batcher keeps the request's batch size and enqueue time.
    return this.batcher.enqueue({
      id: request.id ?? '',
      payload: execution,
      batchSize: request.batchSize,
      inputs: execution.inputs,
      priority: schedulingParameter(execution.parameters, 'priority'),
      timeoutUs: schedulingParameter(execution.parameters, 'timeout'),
      signal: request.signal,
    });
  }

  inflight(): number {
    return this.batcher.inflight();
  }

  queued(): number {
    return this.batcher.queued();
  }

  stop(): Promise<void> {
    this.stopping ??= this.batcher.stop().then(() => this.onStopped?.());
    return this.stopping;
  }
}
