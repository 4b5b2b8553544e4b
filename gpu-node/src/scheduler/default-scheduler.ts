/**
 * Triton's default scheduler (no scheduling_choice in the config): every request is its own payload,
 * payloads wait in one FIFO queue with no timeout, size limit or priority, and the first idle instance
 * pulls the next one (work pulling, not round-robin). Queue events go to the same BatcherObserver
 * the dynamic batcher reports to, so the pending gauge and CANCELED failures mean the same for both.
 */
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import type { BackendInstance, ExecutionBatchResult } from '../backends/backend.js';
import { unwatchAbort, watchAbort } from './abort-watch.js';
import { notify, type BatcherObserver } from './dynamic/batcher-observer.js';
import { abortedRequestError, schedulerError } from './scheduler-errors.js';
import {
  REQUEST_CANCELLED_MESSAGE,
  SCHEDULER_STOPPED_MESSAGE,
  type ExecutionObserver,
  type ScheduledRequest,
  type ScheduledResult,
  type Scheduler,
} from './scheduler.js';

/** One queued request; it is its own abort listener (handleEvent), so no closure is made per request. */
class Entry {
  settled = false;
  listening = false;
  readonly enqueuedAt = process.hrtime.bigint();

  constructor(
    readonly request: ScheduledRequest,
    readonly resolve: (value: ScheduledResult) => void,
    readonly reject: (error: TesseraError) => void,
    private readonly scheduler: DefaultScheduler,
  ) {}

  handleEvent(): void {
    this.scheduler.abort(this);
  }
}

export class DefaultScheduler implements Scheduler {
  private readonly waiting: Entry[] = [];
  /** Idle instances in the order they became idle, so the longest-idle one takes the next request. */
  private readonly idle: BackendInstance[];
  private executing = 0;
  private stopped = false;
  private drainWaiters: (() => void)[] = [];

  constructor(
    instances: readonly BackendInstance[],
    private readonly observer?: ExecutionObserver,
    private readonly queueObserver?: BatcherObserver,
  ) {
    if (instances.length === 0) throw TesseraError.internal('the default scheduler needs at least one instance');
    // An instance that takes several executions at once (its `concurrency`) has that many idle slots.
    this.idle = instances.flatMap((instance) => Array.from({ length: Math.max(1, instance.concurrency ?? 1) }, () => instance));
  }

  enqueue(request: ScheduledRequest): Promise<ScheduledResult> {
    if (this.stopped) return Promise.reject(schedulerError(TesseraError.unavailable(SCHEDULER_STOPPED_MESSAGE)));
    const id = request.id ?? '';
    if (request.signal?.aborted) {
      // Counted as queued and cancelled at once, as the dynamic batcher counts it (a deadline of 0).
      notify(this.queueObserver, 'requestQueued', { id, level: 0 });
      notify(this.queueObserver, 'requestLeftQueue', { id, reason: 'cancelled', queueUs: 0 });
      return Promise.reject(abortedRequestError(request.signal, REQUEST_CANCELLED_MESSAGE));
    }
    return new Promise<ScheduledResult>((resolve, reject) => {
      const entry = new Entry(request, resolve, reject, this);
      notify(this.queueObserver, 'requestQueued', { id, level: 0 });
      if (request.signal) {
        entry.listening = true;
        watchAbort(request.signal, entry);
      }
      this.waiting.push(entry);
      this.dispatch();
    });
  }

  inflight(): number {
    return this.executing;
  }

  queued(): number {
    return this.waiting.length;
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.isDrained()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.waiting.length > 0) {
      const entry = this.waiting.shift() as Entry;
      const instance = this.idle.shift() as BackendInstance;
      void this.execute(instance, entry);
    }
  }

  private async execute(instance: BackendInstance, entry: Entry): Promise<void> {
    this.executing += 1;
    const queueNs = Number(process.hrtime.bigint() - entry.enqueuedAt);
    notify(this.queueObserver, 'requestLeftQueue', { id: entry.request.id ?? '', reason: 'scheduled', queueUs: Math.floor(queueNs / 1000) });
    let batch: ExecutionBatchResult | undefined;
    let failure: TesseraError | undefined;
    try {
      batch = await instance.execute([entry.request.execution]);
    } catch (error) {
      failure = toTesseraError(error);
    }
    this.executing -= 1;
    this.idle.push(instance);

    if (batch) {
      this.observer?.executionFinished(entry.request.batchSize, batch.timing);
      const result = batch.results[0];
      if (batch.results.length !== 1 || !result) {
        failure = TesseraError.internal(
          `backend returned ${batch.results.length} results for an execution of 1 request on '${instance.spec.name}'`,
        );
      } else if (this.settle(entry)) {
        entry.resolve({ result, queueNs, timing: batch.timing });
      }
    }
    if (failure && this.settle(entry)) entry.reject(failure);
    // A request aborted while executing was answered already; settle() drops its late result.
    this.dispatch();
    this.checkDrained();
  }

  /** Entry's abort listener: not for other callers. */
  abort(entry: Entry): void {
    if (entry.settled) return;
    const index = this.waiting.indexOf(entry);
    const id = entry.request.id ?? '';
    const elapsedUs = Math.floor(Number(process.hrtime.bigint() - entry.enqueuedAt) / 1000);
    // Still queued: it leaves the queue and never runs. Executing: the caller is answered now and the
    // backend's result, when it comes, is dropped (Triton does not interrupt a running execution).
    if (index >= 0) {
      this.waiting.splice(index, 1);
      notify(this.queueObserver, 'requestLeftQueue', { id, reason: 'cancelled', queueUs: elapsedUs });
    } else {
      notify(this.queueObserver, 'requestCancelledRunning', { id, elapsedUs });
    }
    if (this.settle(entry)) entry.reject(abortedRequestError(entry.request.signal, REQUEST_CANCELLED_MESSAGE));
    this.checkDrained();
  }

  /** Marks the entry settled and stops listening for its abort; false when it was settled already (answer nothing). */
  private settle(entry: Entry): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    if (entry.listening && entry.request.signal !== undefined) unwatchAbort(entry.request.signal, entry);
    return true;
  }

  private isDrained(): boolean {
    return this.waiting.length === 0 && this.executing === 0;
  }

  private checkDrained(): void {
    if (!this.stopped || !this.isDrained()) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
