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
import { schedulingParameters } from './batcher-request.js';
import { realClock } from './clock.js';
import type { Clock } from './clock.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import type { BatchExecutor } from './dynamic-batcher.js';
import type { InstanceGateFactory } from './instance-gate.js';

interface Payload {
  readonly execution: ExecutionRequest;
  readonly batchSize: number;
  readonly enqueuedUs: number;
}

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
  private readonly batcher: DynamicBatcher<Payload, ScheduledResult>;
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
      (instance): BatchExecutor<Payload, ScheduledResult> => ({
        async execute(payloads) {
          const startUs = clock.now();
          const batch = await instance.execute(payloads.map((p) => p.execution));
          observer?.executionFinished(
            payloads.reduce((sum, p) => sum + p.batchSize, 0),
            batch.timing,
          );
          return {
            results: batch.results.map((result, i) => ({
              result,
              queueNs: Math.round((startUs - (payloads[i]?.enqueuedUs ?? startUs)) * 1000),
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
    const { priority, timeoutUs } = schedulingParameters(request.execution.parameters);
    return this.batcher.enqueue({
      id: request.id ?? '',
      payload: { execution: request.execution, batchSize: request.batchSize, enqueuedUs: this.clock.now() },
      batchSize: request.batchSize,
      inputs: request.execution.inputs,
      priority,
      timeoutUs,
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
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
