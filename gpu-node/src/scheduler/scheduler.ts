/**
 * The one scheduler contract of the node (Triton's Scheduler: Enqueue / Stop). A model version owns
 * one scheduler; which kind it gets is decided only in `create-scheduler.ts`, from the model config.
 */
import type { ExecutionRequest, ExecutionResult, ExecutionTiming } from '../backends/backend.js';
import type { Cancellable } from './call-cancellation.js';

/** A validated request on its way to an instance. */
export interface ScheduledRequest {
  readonly execution: ExecutionRequest;
  /** Batch elements carried (1 for a model that does not batch): feeds inference_count and batch_stats. */
  readonly batchSize: number;
  /** Aborted by the client: a queued request leaves the queue unexecuted; an executing one is dropped. */
  readonly signal?: Cancellable;
  /** The client's request id, so queue errors can name it as Triton does (`[request id: <id>]`). */
  readonly id?: string;
}

/** What one request got back, with the timings its statistics need. */
export interface ScheduledResult {
  readonly result: ExecutionResult;
  /** From enqueue to the start of the execution that carried it. */
  readonly queueNs: number;
  /** Timing of that execution (a batch shares it between its requests, as Triton reports it). */
  readonly timing: ExecutionTiming;
}

/** Told about every execution an instance finished, once per execution (not per request). */
export interface ExecutionObserver {
  executionFinished(batchSize: number, timing: ExecutionTiming): void;
}

export interface Scheduler {
  /**
   * Resolves with the backend's answer (a per-request error is a resolved `{ error }` result); rejects
   * with CANCELLED when aborted, UNAVAILABLE once stopped, INTERNAL when the backend throws.
   */
  enqueue(request: ScheduledRequest): Promise<ScheduledResult>;
  /** Requests executing on an instance now. */
  inflight(): number;
  /** Requests accepted and waiting for an instance (Triton's pending request count). */
  queued(): number;
  /** Refuses new requests, lets every accepted one finish, and resolves when none is left. */
  stop(): Promise<void>;
  /**
   * Streams 0..n responses per request though the config does not say so (an ensemble whose last
   * step is a decoupled model); the version is then decoupled.
   */
  readonly decoupled?: boolean;
}

export const SCHEDULER_STOPPED_MESSAGE =
  'Server is stopping, scheduler for model has stopped accepting new inference requests';
export const REQUEST_CANCELLED_MESSAGE = 'Request was cancelled';
