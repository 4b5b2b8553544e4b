/**
 * Triton's dynamic batcher (reference 4.3): requests wait in a priority queue; whenever an instance is
 * idle, a batch is formed from the head of the queue (batch-former.ts) and started on that instance.
 *
 * Instances pull work: nothing is formed while every instance is busy, so requests pile up and the next
 * batch is as large as the queue allows — Triton's "a batch keeps growing until an instance starts it".
 * A batch is committed only at the instant it starts executing, so there is no formed-but-waiting batch
 * that could have grown, and Triton's prefetch (which only adds such waiting batches) is not needed.
 *
 * Work is evaluated on the event loop: arrivals in one turn are coalesced (one evaluation per turn), a
 * single timer wakes the batcher for the queue delay or the nearest request deadline, and finishing a
 * batch re-evaluates at once. With a FakeClock every decision is deterministic.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { ExecutionTiming } from '../../backends/backend.js';
import { unwatchAbort, watchAbort, type AbortHandler } from '../abort-watch.js';
import type { Cancellable } from '../call-cancellation.js';
import { abortedRequestError, schedulerError } from '../scheduler-errors.js';
import { formBatch, batchFormingSettings } from './batch-former.js';
import type { BatchFormingSettings } from './batch-former.js';
import type { DynamicBatcherOptions } from './batcher-options.js';
import { notify } from './batcher-observer.js';
import type { BatcherObserver, BatchInfo } from './batcher-observer.js';
import { SignatureMemo } from './batcher-request.js';
import type { BatcherRequest } from './batcher-request.js';
import { realClock } from './clock.js';
import type { CancelTimer, Clock } from './clock.js';
import type { InstanceGate, InstanceGateFactory } from './instance-gate.js';
import { OrderedRelease } from './ordered-release.js';
import { PriorityQueue } from './priority-queue.js';
import type { QueueEntry } from './priority-queue.js';

/** What the batcher knows of each request of a batch besides its payload. */
export interface QueuedRequest {
  readonly batchSize: number;
  /** When it entered the queue (the batcher's clock, µs). */
  readonly enqueuedUs: number;
}

/** One model instance as the batcher uses it; a BackendInstance satisfies this directly. */
export interface BatchExecutor<P, R> {
  /**
   * Runs a batch; one result per request, in the order given. `queued` (same order) says when each
   * entered the queue, so a payload need not carry it.
   */
  execute(requests: readonly P[], queued: readonly QueuedRequest[]): Promise<{ readonly results: readonly R[]; readonly timing?: ExecutionTiming }>;
}

export interface DynamicBatcherDeps<P, R> {
  readonly options: DynamicBatcherOptions;
  readonly instances: readonly BatchExecutor<P, R>[];
  readonly clock?: Clock;
  readonly observer?: BatcherObserver;
  /** Rate limiting (execution_count); absent = off. */
  readonly gate?: InstanceGateFactory;
}

export const STOPPING_MESSAGE =
  'Server is stopping, scheduler for model has stopped accepting new inference requests';
export const TIMEOUT_MESSAGE = 'Request timeout expired';
export const CANCELLED_MESSAGE = 'Request was cancelled';

type EntryState = 'queued' | 'running' | 'done';

type BatchOutcome<R> =
  | { readonly results: readonly R[]; readonly timing?: ExecutionTiming }
  | { readonly error: TesseraError };

/**
 * One queued request. It is its own abort handler (handleEvent), so a request that can be cancelled
 * makes no watcher object or closures: at a wave of 64 gRPC calls these outlived the scavenges.
 */
class Entry<P, R> implements QueueEntry, AbortHandler {
  state: EntryState = 'queued';
  ticket = -1;

  constructor(
    readonly id: string,
    readonly payload: P,
    readonly batchSize: number,
    readonly signature: string,
    readonly enqueuedUs: number,
    readonly level: number,
    readonly deadlineUs: number | undefined,
    /** Watched while the entry is queued or running (abort-watch.ts). */
    readonly signal: Cancellable | undefined,
    readonly resolve: (result: R) => void,
    readonly reject: (error: TesseraError) => void,
    private readonly batcher: DynamicBatcher<P, R>,
  ) {}

  handleEvent(): void {
    this.batcher.cancel(this);
  }
}

interface RunningBatch<P, R> extends BatchInfo {
  readonly entries: readonly Entry<P, R>[];
  readonly startUs: number;
  readonly release: () => void;
}

export class DynamicBatcher<P, R> {
  private readonly options: DynamicBatcherOptions;
  private readonly settings: BatchFormingSettings;
  private readonly clock: Clock;
  private readonly observer: BatcherObserver | undefined;
  private readonly instances: readonly BatchExecutor<P, R>[];
  private readonly busy: boolean[];
  /** When each instance last became free (clock µs); used with options.queueDelayFromIdle. */
  private readonly idleSinceUs: number[];
  private readonly gate: InstanceGate | undefined;
  private readonly queue: PriorityQueue<Entry<P, R>>;
  private readonly signatures: SignatureMemo;
  private readonly ordered = new OrderedRelease();
  private running = 0;
  private stopping = false;
  private pumpScheduled = false;
  private pumping = false;
  private pumpAgain = false;
  private timer: { readonly atUs: number; readonly cancel: CancelTimer } | undefined;
  private drained: (() => void)[] = [];

  constructor(deps: DynamicBatcherDeps<P, R>) {
    if (deps.instances.length === 0) throw TesseraError.internal('dynamic batcher needs at least one instance');
    this.options = deps.options;
    this.settings = batchFormingSettings(deps.options);
    this.clock = deps.clock ?? realClock;
    this.observer = deps.observer;
    this.instances = deps.instances;
    this.busy = deps.instances.map(() => false);
    this.idleSinceUs = deps.instances.map(() => -Infinity);
    this.queue = new PriorityQueue(deps.options);
    this.signatures = new SignatureMemo(deps.options.raggedInputs, deps.options.maxBatchSize > 0);
    this.gate = deps.gate?.(() => this.pump());
  }

  /** Requests waiting in the queue (delayed ones included). */
  queued(): number {
    return this.queue.size;
  }

  /** Requests in batches that are executing. */
  inflight(): number {
    return this.running;
  }

  /**
   * Queues a request. Rejects with UNAVAILABLE at once when its priority level is full or the batcher
   * is stopping; later with UNAVAILABLE "Request timeout expired" (REJECT policy) or CANCELLED.
   */
  enqueue(request: BatcherRequest<P>): Promise<R> {
    if (this.stopping) return Promise.reject(schedulerError(TesseraError.unavailable(STOPPING_MESSAGE)));
    const now = this.clock.now();
    let admission;
    try {
      admission = this.queue.admit(request.id, request.priority, request.timeoutUs, now);
    } catch (err) {
      return Promise.reject(toTesseraError(err));
    }
    return new Promise<R>((resolve, reject) => {
      const signal = request.signal;
      const entry = new Entry<P, R>(
        request.id,
        request.payload,
        Math.max(1, request.batchSize),
        this.signatures.of(request.inputs),
        now,
        admission.level,
        admission.deadlineUs,
        signal,
        resolve,
        reject,
        this,
      );
      this.queue.push(entry);
      notify(this.observer, 'requestQueued', { id: entry.id, level: entry.level });
      if (signal !== undefined) {
        if (signal.aborted) {
          this.cancel(entry);
          return;
        }
        // Through abort-watch.ts: a Set per signal (or the call's own record), not an EventTarget listener per request.
        watchAbort(signal, entry);
      }
      this.schedulePump();
    });
  }

  /**
   * Stops accepting requests. Requests already queued still run (as in Triton, where a stopping model
   * finishes its in-flight work); resolves once the queue is empty and no batch is executing.
   */
  stop(): Promise<void> {
    this.stopping = true;
    if (this.isDrained()) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private isDrained(): boolean {
    return this.queue.size === 0 && this.running === 0;
  }

  private checkDrained(): void {
    if (!this.stopping || !this.isDrained()) return;
    const waiters = this.drained;
    this.drained = [];
    for (const resolve of waiters) resolve();
  }

  /** A queued request leaves without running; a running one has its result dropped. Entry's abort handler: not for other callers. */
  cancel(entry: Entry<P, R>): void {
    const signal = entry.signal;
    if (entry.state === 'queued') {
      this.queue.remove(entry);
      notify(this.observer, 'requestLeftQueue', {
        id: entry.id,
        reason: 'cancelled',
        queueUs: this.clock.now() - entry.enqueuedUs,
      });
      this.settle(entry, () => entry.reject(abortedRequestError(signal, CANCELLED_MESSAGE)));
      // The oldest pending request may be gone: the queue-delay wake-up can change.
      this.schedulePump();
      this.checkDrained();
    } else if (entry.state === 'running') {
      notify(this.observer, 'requestCancelledRunning', { id: entry.id, elapsedUs: this.clock.now() - entry.enqueuedUs });
      // Rejected now; under preserve_ordering its slot is released so later responses are not held.
      if (this.options.preserveOrdering) this.ordered.release(entry.ticket, () => {});
      this.settle(entry, () => entry.reject(abortedRequestError(signal, CANCELLED_MESSAGE)));
    }
  }

  private settle(entry: Entry<P, R>, fn: () => void): void {
    this.markDone(entry);
    fn();
  }

  private markDone(entry: Entry<P, R>): void {
    entry.state = 'done';
    if (entry.signal !== undefined) unwatchAbort(entry.signal, entry);
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Expires timed-out requests, starts every batch that can start now, and re-arms the wake-up timer. */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        this.pumpOnce();
      } while (this.pumpAgain);
    } finally {
      this.pumping = false;
    }
    this.checkDrained();
  }

  private pumpOnce(): void {
    const now = this.clock.now();
    for (const entry of this.queue.expire(now)) {
      notify(this.observer, 'requestLeftQueue', { id: entry.id, reason: 'rejected', queueUs: now - entry.enqueuedUs });
      this.settle(entry, () => entry.reject(schedulerError(TesseraError.unavailable(TIMEOUT_MESSAGE))));
    }
    let waitUntil: number | undefined;
    let staged = false;
    for (;;) {
      const idle = this.idleInstances();
      if (idle.length === 0 || this.queue.size === 0) break;
      const decision = formBatch(this.queue.inServingOrder(), now, this.settings, this.options.queueDelayFromIdle ? this.earliestIdleSince(idle) : -Infinity);
      if (decision.kind === 'none') break;
      if (decision.kind === 'wait') {
        waitUntil = decision.untilUs;
        break;
      }
      const grant = this.gate === undefined ? { instance: idle[0] ?? 0, release: () => {} } : this.gate.tryAcquire(idle);
      if (grant === undefined) {
        staged = true;
        break;
      }
      this.start(grant.instance, this.queue.take(decision.count), now, grant.release);
    }
    if (!staged) this.gate?.withdraw();
    this.arm(now, waitUntil);
  }

  private earliestIdleSince(idle: readonly number[]): number {
    let earliest = Infinity;
    for (const i of idle) earliest = Math.min(earliest, this.idleSinceUs[i] ?? -Infinity);
    return earliest;
  }

  private idleInstances(): number[] {
    const idle: number[] = [];
    this.busy.forEach((b, i) => {
      if (!b) idle.push(i);
    });
    return idle;
  }

  /** One timer for the earlier of the queue-delay expiry and the nearest request deadline. */
  private arm(now: number, waitUntil: number | undefined): void {
    const deadline = this.queue.nextDeadline();
    const at = Math.min(waitUntil ?? Infinity, deadline ?? Infinity);
    if (this.timer !== undefined && this.timer.atUs === at) return;
    this.timer?.cancel();
    this.timer = undefined;
    if (at === Infinity) return;
    const cancel = this.clock.setTimer(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(0, at - now),
    );
    this.timer = { atUs: at, cancel };
  }

  private start(instance: number, entries: Entry<P, R>[], now: number, release: () => void): void {
    this.busy[instance] = true;
    this.running += entries.length;
    for (const entry of entries) {
      entry.state = 'running';
      if (this.options.preserveOrdering) entry.ticket = this.ordered.ticket();
      notify(this.observer, 'requestLeftQueue', { id: entry.id, reason: 'scheduled', queueUs: now - entry.enqueuedUs });
    }
    const batch: RunningBatch<P, R> = {
      instance,
      requests: entries.length,
      batchSize: entries.reduce((sum, e) => sum + e.batchSize, 0),
      entries,
      startUs: now,
      release,
    };
    notify(this.observer, 'batchStarted', { instance, requests: batch.requests, batchSize: batch.batchSize });
    let execution: ReturnType<BatchExecutor<P, R>['execute']>;
    try {
      execution = this.instances[instance]!.execute(entries.map((e) => e.payload), entries);
    } catch (err) {
      execution = Promise.reject(err);
    }
    execution.then(
      (out) =>
        this.finish(
          batch,
          out.results.length === entries.length
            ? out
            : { error: TesseraError.internal(`instance returned ${out.results.length} results for ${entries.length} requests`) },
        ),
      (err: unknown) => this.finish(batch, { error: toTesseraError(err) }),
    );
  }

  private finish(batch: RunningBatch<P, R>, outcome: BatchOutcome<R>): void {
    batch.release();
    this.busy[batch.instance] = false;
    this.idleSinceUs[batch.instance] = this.clock.now();
    this.running -= batch.entries.length;
    const { instance, requests, batchSize } = batch;
    notify(this.observer, 'batchFinished', {
      instance,
      requests,
      batchSize,
      durationUs: this.clock.now() - batch.startUs,
      ...('error' in outcome ? { error: outcome.error } : outcome.timing !== undefined ? { timing: outcome.timing } : {}),
    });
    const entries = batch.entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as Entry<P, R>;
      if (entry.state !== 'running') continue; // cancelled while running: already answered
      if (this.options.preserveOrdering) {
        const respond = 'error' in outcome ? () => entry.reject(outcome.error) : () => entry.resolve(outcome.results[i] as R);
        const ticket = entry.ticket;
        this.settle(entry, () => this.ordered.release(ticket, respond));
        continue;
      }
      // Answered at once: no closure per request of the batch.
      this.markDone(entry);
      if ('error' in outcome) entry.reject(outcome.error);
      else entry.resolve(outcome.results[i] as R);
    }
    this.pump();
  }
}
