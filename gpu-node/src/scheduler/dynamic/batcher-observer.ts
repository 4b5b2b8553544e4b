/**
 * Metrics hooks. The batcher reports events; turning them into Triton's statistics and Prometheus series
 * (nv_inference_queue_duration_us, exec_count, pending count, failure{reason}) is the stats module's job.
 * Every method is optional, and an observer that throws never disturbs scheduling.
 */
import type { ExecutionTiming } from '../../backends/backend.js';

export type LeftQueueReason = 'scheduled' | 'rejected' | 'cancelled';

export interface BatchInfo {
  /** Index of the instance in the batcher's instance list. */
  readonly instance: number;
  readonly requests: number;
  /** Batch elements (sum of the requests' batch sizes): the key of Triton's batch_stats. */
  readonly batchSize: number;
}

export interface BatcherObserver {
  /** A request entered the queue (pending +1). */
  requestQueued?(info: { readonly id: string; readonly level: number }): void;
  /**
   * A request left the queue: into a batch (queue time ends, since a batch starts the moment it is
   * formed), rejected by its timeout (failure reason REJECTED), or cancelled (reason CANCELED).
   */
  requestLeftQueue?(info: { readonly id: string; readonly reason: LeftQueueReason; readonly queueUs: number }): void;
  /**
   * A request's result was dropped because it was cancelled while its batch ran (reason CANCELED);
   * `elapsedUs` runs from its enqueue to the cancellation (the failure's duration).
   */
  requestCancelledRunning?(info: { readonly id: string; readonly elapsedUs: number }): void;
  /** A batch started on an instance (execution count +1, batch-size histogram +1 at `batchSize`). */
  batchStarted?(info: BatchInfo): void;
  /** A batch finished; `error` when the whole execution failed, `timing` as the backend reported it. */
  batchFinished?(
    info: BatchInfo & { readonly durationUs: number; readonly error?: unknown; readonly timing?: ExecutionTiming },
  ): void;
}

/** Calls one hook, isolating the batcher from observer bugs. */
export function notify<K extends keyof BatcherObserver>(
  observer: BatcherObserver | undefined,
  hook: K,
  info: Parameters<NonNullable<BatcherObserver[K]>>[0],
): void {
  const fn = observer?.[hook] as ((arg: typeof info) => void) | undefined;
  if (fn === undefined) return;
  try {
    fn.call(observer, info);
  } catch {
    // Metrics must never fail an inference.
  }
}

/** A ready-made observer that just counts; handy for tests, logs and as the model for a stats adapter. */
export class BatcherCounters implements BatcherObserver {
  pending = 0;
  executions = 0;
  rejected = 0;
  cancelled = 0;
  queueUsTotal = 0;
  /** Executed batch size → number of executions. */
  readonly batchSizes = new Map<number, number>();

  requestQueued(): void {
    this.pending += 1;
  }

  requestLeftQueue(info: { readonly reason: LeftQueueReason; readonly queueUs: number }): void {
    this.pending -= 1;
    if (info.reason === 'rejected') this.rejected += 1;
    else if (info.reason === 'cancelled') this.cancelled += 1;
    else this.queueUsTotal += info.queueUs;
  }

  requestCancelledRunning(): void {
    this.cancelled += 1;
  }

  batchStarted(info: BatchInfo): void {
    this.executions += 1;
    this.batchSizes.set(info.batchSize, (this.batchSizes.get(info.batchSize) ?? 0) + 1);
  }
}
