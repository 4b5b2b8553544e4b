/**
 * Statistics of one model version, kept as Triton's InferenceStatsAggregator keeps them, in two views:
 * - `statistics()`: the statistics extension's shape (`ModelStatistics`, durations in ns);
 * - `snapshot()`: `ModelStatsSnapshot`, the counters a Prometheus exporter turns into Triton's
 *   `nv_inference_*` series (durations in µs, failures by reason, pending requests).
 * Rules (Triton's): a request counts once in success or fail; success/queue/compute_* are per request,
 * the compute_* of a request being those of the execution that carried it; inference_count adds the
 * batch size of each execution and execution_count one per execution; batch_stats are per execution.
 * Requests refused by validation before queueing are not counted, as in Triton.
 *
 * Sources: the model version records successes and backend failures (it knows the request's whole
 * duration); the scheduler's queue events (`BatcherObserver`, both schedulers) drive the pending gauge
 * and the scheduler's own failures — queue timeout under REJECT (REJECTED) and cancellation, queued or
 * running (CANCELED); refusals at enqueue (queue full, stopping) are not failures, as in Triton.
 * Executions (exec count, inference count, batch_stats and the batch-size histogram) are recorded
 * when they finish, from one call, so those views always agree.
 */
import type { ExecutionTiming } from '../backends/backend.js';
import type { BatcherObserver, LeftQueueReason } from '../scheduler/dynamic/batcher-observer.js';
import type { DurationStat, ModelStatistics } from './model-statistics.js';

/** The `reason` label of `nv_inference_request_failure`. */
export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';
export const FAILURE_REASONS: readonly FailureReason[] = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'];

/**
 * Read-only counters of one model version for metrics exporters. Every field only grows, except
 * `pendingRequests` (a gauge). Durations are whole microseconds summed per request, as Triton adds them.
 */
export interface ModelStatsSnapshot {
  readonly model: string;
  readonly version: string;
  /** nv_inference_request_success: requests that succeeded (a batched request counts once). */
  readonly requestSuccess: number;
  /** nv_inference_request_failure{reason}. */
  readonly requestFailure: Readonly<Record<FailureReason, number>>;
  /** nv_inference_count: batch elements executed. */
  readonly inferenceCount: number;
  /** nv_inference_exec_count: executions. */
  readonly executionCount: number;
  /** nv_inference_pending_request_count: accepted, not yet executing. */
  readonly pendingRequests: number;
  /**
   * tessera_inference_batch_size: executions per batch size (batch elements), ascending by size; the
   * same counts as the statistics extension's batch_stats.
   */
  readonly batchSizes: readonly { readonly batchSize: number; readonly executions: number }[];
  /** nv_inference_request_duration_us: end to end, successful requests. */
  readonly requestDurationUs: number;
  /** nv_inference_queue_duration_us */
  readonly queueDurationUs: number;
  /** nv_inference_compute_input_duration_us */
  readonly computeInputDurationUs: number;
  /** nv_inference_compute_infer_duration_us */
  readonly computeInferDurationUs: number;
  /** nv_inference_compute_output_duration_us */
  readonly computeOutputDurationUs: number;
  /** ms since the epoch of the last request answered; 0 when none. */
  readonly lastInferenceMs: number;
  /**
   * nv_inference_first_response_histogram_ms: from a request's arrival at its model to its first
   * response (a decoupled model's first streamed response; otherwise its one response). `buckets[i]`
   * counts the observations <= FIRST_RESPONSE_BUCKETS_MS[i] (cumulative); count and sum cover all.
   */
  readonly firstResponse: { readonly buckets: readonly number[]; readonly count: number; readonly sumMs: number };
}

/** Triton's default buckets of nv_inference_first_response_histogram_ms. */
export const FIRST_RESPONSE_BUCKETS_MS: readonly number[] = [100, 500, 2000, 5000];

interface MutableDuration {
  count: number;
  ns: number;
}

interface BatchStat {
  computeInput: MutableDuration;
  computeInfer: MutableDuration;
  computeOutput: MutableDuration;
}

const duration = (): MutableDuration => ({ count: 0, ns: 0 });
const frozen = (d: MutableDuration): DurationStat => ({ count: d.count, ns: d.ns });
const add = (d: MutableDuration, ns: number): void => {
  d.count += 1;
  d.ns += ns;
};
const micros = (ns: number): number => Math.floor(ns / 1000);

export class ModelStatsCollector implements BatcherObserver {
  private readonly success = duration();
  private readonly fail = duration();
  private readonly queue = duration();
  private readonly computeInput = duration();
  private readonly computeInfer = duration();
  private readonly computeOutput = duration();
  private readonly batches = new Map<number, BatchStat>();
  private readonly failures: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  private readonly micros = { request: 0, queue: 0, input: 0, infer: 0, output: 0 };
  private inferenceCount = 0;
  private executionCount = 0;
  private lastInferenceMs = 0;
  private pending = 0;
  private readonly firstResponse = { buckets: FIRST_RESPONSE_BUCKETS_MS.map(() => 0), count: 0, sumMs: 0 };

  constructor(
    readonly model: string,
    readonly version: string,
  ) {}

  /** Queue event: a request entered the scheduler's queue (pending +1). */
  requestQueued(): void {
    this.pending += 1;
  }

  /**
   * Queue event: a request left the queue (pending −1). Its queue time, when it was scheduled, is
   * recorded with its success (Triton's queue statistic is per successful request); a queue timeout
   * or a cancellation is a failure lasting its time in the queue.
   */
  requestLeftQueue(info: { readonly reason: LeftQueueReason; readonly queueUs: number }): void {
    this.pending = Math.max(0, this.pending - 1);
    if (info.reason === 'rejected') this.recordFailure('REJECTED', info.queueUs * 1000);
    else if (info.reason === 'cancelled') this.recordFailure('CANCELED', info.queueUs * 1000);
  }

  /** Queue event: a request was cancelled while its execution ran; its result is dropped. */
  requestCancelledRunning(info: { readonly elapsedUs: number }): void {
    this.recordFailure('CANCELED', info.elapsedUs * 1000);
  }

  recordSuccess(requestNs: number, queueNs: number, timing: ExecutionTiming): void {
    add(this.success, requestNs);
    add(this.queue, queueNs);
    add(this.computeInput, timing.computeInputNs);
    add(this.computeInfer, timing.computeInferNs);
    add(this.computeOutput, timing.computeOutputNs);
    this.micros.request += micros(requestNs);
    this.micros.queue += micros(queueNs);
    this.micros.input += micros(timing.computeInputNs);
    this.micros.infer += micros(timing.computeInferNs);
    this.micros.output += micros(timing.computeOutputNs);
    this.lastInferenceMs = Date.now();
  }

  /** A request's first response went out `ns` after the request reached the model. */
  recordFirstResponse(ns: number): void {
    const ms = ns / 1e6;
    const histogram = this.firstResponse;
    // A plain loop: this runs once per inference, and the callback form made a closure each time.
    for (let i = 0; i < FIRST_RESPONSE_BUCKETS_MS.length; i++) if (ms <= FIRST_RESPONSE_BUCKETS_MS[i]!) histogram.buckets[i] = (histogram.buckets[i] ?? 0) + 1;
    histogram.count += 1;
    histogram.sumMs += ms;
  }

  recordFailure(reason: FailureReason, requestNs: number): void {
    add(this.fail, requestNs);
    this.failures[reason] += 1;
    this.lastInferenceMs = Date.now();
  }

  /** One execution (batch) finished on an instance. */
  recordExecution(batchSize: number, timing: ExecutionTiming): void {
    const size = Math.max(1, batchSize);
    this.inferenceCount += size;
    this.executionCount += 1;
    let stat = this.batches.get(size);
    if (!stat) {
      stat = { computeInput: duration(), computeInfer: duration(), computeOutput: duration() };
      this.batches.set(size, stat);
    }
    add(stat.computeInput, timing.computeInputNs);
    add(stat.computeInfer, timing.computeInferNs);
    add(stat.computeOutput, timing.computeOutputNs);
  }

  statistics(): ModelStatistics {
    return {
      name: this.model,
      version: this.version,
      last_inference: this.lastInferenceMs,
      inference_count: this.inferenceCount,
      execution_count: this.executionCount,
      inference_stats: {
        success: frozen(this.success),
        fail: frozen(this.fail),
        queue: frozen(this.queue),
        compute_input: frozen(this.computeInput),
        compute_infer: frozen(this.computeInfer),
        compute_output: frozen(this.computeOutput),
        // No response cache yet: both stay zero.
        cache_hit: { count: 0, ns: 0 },
        cache_miss: { count: 0, ns: 0 },
      },
      batch_stats: [...this.batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([size, stat]) => ({
          batch_size: size,
          compute_input: frozen(stat.computeInput),
          compute_infer: frozen(stat.computeInfer),
          compute_output: frozen(stat.computeOutput),
        })),
    };
  }

  snapshot(): ModelStatsSnapshot {
    return {
      model: this.model,
      version: this.version,
      requestSuccess: this.success.count,
      requestFailure: { ...this.failures },
      inferenceCount: this.inferenceCount,
      executionCount: this.executionCount,
      pendingRequests: this.pending,
      batchSizes: [...this.batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([batchSize, stat]) => ({ batchSize, executions: stat.computeInfer.count })),
      requestDurationUs: this.micros.request,
      queueDurationUs: this.micros.queue,
      computeInputDurationUs: this.micros.input,
      computeInferDurationUs: this.micros.infer,
      computeOutputDurationUs: this.micros.output,
      lastInferenceMs: this.lastInferenceMs,
      firstResponse: { buckets: [...this.firstResponse.buckets], count: this.firstResponse.count, sumMs: this.firstResponse.sumMs },
    };
  }
}
