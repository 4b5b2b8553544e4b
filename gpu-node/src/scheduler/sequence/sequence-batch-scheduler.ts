/**
 * Triton's sequence batcher (`sequence_batching`, reference 4.4): routes every request of a sequence
 * (same correlation ID) to the one slot that sequence holds, so a stateful model sees a stream's
 * requests in order, in the same batch row (direct) and with its implicit state carried between them.
 *
 * - Enqueue refuses batch size > 1, a missing or zero correlation ID, and a request without START for
 *   a sequence that is not active (never started, ended, or reaped); none of these touch any other
 *   sequence. A START for an active ID ends the old sequence early: the new one continues in its slot.
 * - A new sequence takes the lowest free slot (slot 0 on every instance, then slot 1, ...), or waits in
 *   a backlog queue of its own; backlogs get slots FIFO as sequences end.
 * - An END request drops the ID's mapping at once; its slot is freed when it joins a batch.
 * - The idle reaper frees the slot of a sequence that sent nothing for max_sequence_idle_microseconds
 *   (a release marker queued behind its requests); backlogged sequences are never reaped.
 * - Cancelling a queued request cancels every queued request of its sequence and frees the slot.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance } from '../../backends/backend.js';
import { requestPrefix } from '../../messages/request-prefix.js';
import { notify, type BatcherObserver } from '../dynamic/batcher-observer.js';
import { realClock, type CancelTimer, type Clock } from '../dynamic/clock.js';
import { abortedRequestError, schedulerError } from '../scheduler-errors.js';
import { abortSignalOf } from '../call-cancellation.js';
import {
  REQUEST_CANCELLED_MESSAGE,
  SCHEDULER_STOPPED_MESSAGE,
  type ExecutionObserver,
  type ScheduledRequest,
  type ScheduledResult,
  type Scheduler,
} from '../scheduler.js';
import { correlationKey, formatCorrelationId, readSequenceFlags } from './correlation-id.js';
import { sequenceSettingsFromConfig, type SequenceSettings } from './sequence-settings.js';
import { checkCorrelationIdType } from './sequence-tensors.js';
import { RELEASE, SlotBatcher, type SequenceEntry } from './slot-batcher.js';

export interface SequenceSchedulerOptions {
  /** Default: the process clock. Tests pass a FakeClock. */
  readonly clock?: Clock;
  /** Queue events (pending gauge, CANCELED failures), as the other schedulers report them. */
  readonly queueObserver?: BatcherObserver;
  /** `<repository>/<model>`, for initial_state data files. */
  readonly modelDir?: string;
  /** Told about a START for an ID whose sequence never ended (Triton logs a warning). */
  readonly onWarning?: (message: string) => void;
}

interface SlotRef {
  readonly instance: number;
  readonly slot: number;
}

/** The requests of one sequence that found no free slot, in arrival order. */
interface Backlog {
  readonly key: string;
  readonly entries: SequenceEntry[];
}

/** Lowest slot index first, then lowest instance: sequences spread across instances. */
function slotBefore(a: SlotRef, b: SlotRef): boolean {
  return a.slot < b.slot || (a.slot === b.slot && a.instance < b.instance);
}

export class SequenceBatchScheduler implements Scheduler {
  readonly settings: SequenceSettings;
  private readonly clock: Clock;
  private readonly batchers: SlotBatcher[];
  /** Free slots, kept sorted by slotBefore (a few hundred at most: a sorted array is enough). */
  private readonly free: SlotRef[] = [];
  private readonly active = new Map<string, SlotRef>();
  private readonly backlogByKey = new Map<string, Backlog>();
  private readonly backlogs: Backlog[] = [];
  /** Arrival time of each active sequence's latest request, for the idle reaper. */
  private readonly lastSeenUs = new Map<string, number>();
  /** Where each queued entry waits, so a cancellation can find its sequence. */
  private readonly placement = new Map<SequenceEntry, SlotRef | Backlog>();
  private reaper: CancelTimer | undefined;
  private reaperDueUs = Infinity;
  private stopped = false;
  private drainWaiters: (() => void)[] = [];

  constructor(
    config: ModelConfig,
    instances: readonly BackendInstance[],
    observer?: ExecutionObserver,
    private readonly options: SequenceSchedulerOptions = {},
  ) {
    if (instances.length === 0) throw TesseraError.internal('the sequence batcher needs at least one instance');
    this.settings = sequenceSettingsFromConfig(config, options.modelDir === undefined ? {} : { modelDir: options.modelDir });
    this.clock = options.clock ?? realClock;
    const env = {
      settings: this.settings,
      clock: this.clock,
      ...(observer === undefined ? {} : { observer }),
      ...(options.queueObserver === undefined ? {} : { queueObserver: options.queueObserver }),
      slotReleased: (instance: number, slot: number) => this.slotReleased({ instance, slot }),
      executionDone: () => this.checkDrained(),
    };
    this.batchers = instances.map((instance, index) => new SlotBatcher(index, instance, env));
    for (let slot = 0; slot < this.settings.slotsPerInstance; slot++) {
      for (let instance = 0; instance < instances.length; instance++) this.free.push({ instance, slot });
    }
  }

  enqueue(request: ScheduledRequest): Promise<ScheduledResult> {
    if (this.stopped) return Promise.reject(schedulerError(TesseraError.unavailable(SCHEDULER_STOPPED_MESSAGE)));
    let entry: SequenceEntry | undefined;
    const promise = new Promise<ScheduledResult>((resolve, reject) => {
      entry = this.accept(request, resolve, reject);
    });
    if (entry !== undefined) this.place(entry);
    return promise;
  }

  inflight(): number {
    return this.batchers.reduce((n, b) => n + b.inflight(), 0);
  }

  queued(): number {
    return this.batchers.reduce((n, b) => n + b.queued(), 0) + this.backlogs.reduce((n, b) => n + b.entries.length, 0);
  }

  stop(): Promise<void> {
    this.stopped = true;
    // Sequences left open keep their slots until the reaper frees them, so backlogged requests still run.
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      this.checkDrained();
    });
  }

  /** Validates a request (Triton's SequenceBatchScheduler::Enqueue checks) and makes its entry. */
  private accept(
    request: ScheduledRequest,
    resolve: (value: ScheduledResult) => void,
    reject: (error: TesseraError) => void,
  ): SequenceEntry | undefined {
    const model = this.settings.modelName;
    const log = requestPrefix(request.id ?? '');
    const refuse = (message: string) => reject(schedulerError(TesseraError.invalidArg(log + message)));
    let flags;
    try {
      flags = readSequenceFlags(request.execution.parameters);
      if (flags.id !== undefined) checkCorrelationIdType(this.settings, flags.id);
    } catch (error) {
      refuse(error instanceof Error ? error.message : String(error));
      return undefined;
    }
    if (request.batchSize > 1) {
      refuse(`inference request to model '${model}' must specify batch-size 1 due to requirements of sequence batcher`);
      return undefined;
    }
    if (flags.id === undefined) {
      refuse(`inference request to model '${model}' must specify a non-zero or non-empty correlation ID`);
      return undefined;
    }
    const key = correlationKey(flags.id);
    const known = this.active.has(key) || this.backlogByKey.has(key);
    if (!flags.start && !known) {
      refuse(
        `inference request for sequence ${formatCorrelationId(flags.id)} to model '${model}' must specify the START flag on the first request of the sequence`,
      );
      return undefined;
    }
    if (flags.start && known) {
      this.options.onWarning?.(
        `sequence ${formatCorrelationId(flags.id)} for model '${model}' has a conflict. The previous sequence did not end before this sequence start.`,
      );
    }
    const entry: SequenceEntry = {
      request,
      id: flags.id,
      key,
      start: flags.start,
      end: flags.end,
      enqueuedUs: this.clock.now(),
      settled: false,
      resolve: (value) => {
        this.detach(entry);
        resolve(value);
      },
      reject: (error) => {
        this.detach(entry);
        reject(error);
      },
    };
    if (request.signal?.aborted) {
      // Counted as queued and cancelled at once, as the other schedulers count it.
      notify(this.options.queueObserver, 'requestQueued', { id: request.id ?? '', level: 0 });
      notify(this.options.queueObserver, 'requestLeftQueue', { id: request.id ?? '', reason: 'cancelled', queueUs: 0 });
      entry.settled = true;
      reject(abortedRequestError(request.signal, REQUEST_CANCELLED_MESSAGE));
      return undefined;
    }
    return entry;
  }

  private readonly aborts = new Map<SequenceEntry, () => void>();

  private detach(entry: SequenceEntry): void {
    this.placement.delete(entry);
    const onAbort = this.aborts.get(entry);
    if (onAbort !== undefined) abortSignalOf(entry.request.signal)?.removeEventListener('abort', onAbort);
    this.aborts.delete(entry);
  }

  /** Routes an accepted request to its sequence's slot, its backlog, or a new slot or backlog. */
  private place(entry: SequenceEntry): void {
    notify(this.options.queueObserver, 'requestQueued', { id: entry.request.id ?? '', level: 0 });
    const signal = entry.request.signal;
    if (signal !== undefined) {
      const onAbort = () => this.cancelSequence(entry);
      this.aborts.set(entry, onAbort);
      abortSignalOf(signal).addEventListener('abort', onAbort, { once: true });
    }
    const key = entry.key;
    const ref = this.active.get(key);
    const backlog = this.backlogByKey.get(key);
    if (ref !== undefined) {
      this.lastSeenUs.set(key, entry.enqueuedUs);
      if (entry.end) this.forget(key);
      this.placement.set(entry, ref);
      (this.batchers[ref.instance] as SlotBatcher).push(ref.slot, entry);
    } else if (backlog !== undefined) {
      backlog.entries.push(entry);
      this.placement.set(entry, backlog);
      if (entry.end) this.backlogByKey.delete(key);
    } else {
      const slot = this.free.shift();
      if (slot === undefined) {
        const fresh: Backlog = { key, entries: [entry] };
        this.backlogs.push(fresh);
        this.placement.set(entry, fresh);
        if (!entry.end) this.backlogByKey.set(key, fresh);
      } else {
        const batcher = this.batchers[slot.instance] as SlotBatcher;
        batcher.assign(slot.slot);
        if (!entry.end) {
          this.active.set(key, slot);
          this.lastSeenUs.set(key, entry.enqueuedUs);
        }
        this.placement.set(entry, slot);
        batcher.push(slot.slot, entry);
      }
    }
    this.armReaper();
  }

  private forget(key: string): void {
    this.active.delete(key);
    this.lastSeenUs.delete(key);
  }

  /** A slot lost its sequence: the oldest backlog takes it, or it goes back among the free slots. */
  private slotReleased(ref: SlotRef): void {
    const backlog = this.backlogs.shift();
    if (backlog === undefined) {
      const at = this.free.findIndex((other) => slotBefore(ref, other));
      this.free.splice(at < 0 ? this.free.length : at, 0, ref);
      this.checkDrained();
      return;
    }
    const batcher = this.batchers[ref.instance] as SlotBatcher;
    batcher.assign(ref.slot);
    if (this.backlogByKey.get(backlog.key) === backlog) {
      // Still open: from now on its requests go straight to the slot, and the reaper watches it.
      this.backlogByKey.delete(backlog.key);
      this.active.set(backlog.key, ref);
      this.lastSeenUs.set(backlog.key, Math.max(...backlog.entries.map((e) => e.enqueuedUs)));
    }
    for (const entry of backlog.entries) {
      this.placement.set(entry, ref);
      batcher.push(ref.slot, entry);
    }
    this.armReaper();
  }

  /** Sets the reaper's timer for the earliest moment an active sequence can become idle. */
  private armReaper(): void {
    let due = Infinity;
    for (const [key, seen] of this.lastSeenUs) if (this.active.has(key)) due = Math.min(due, seen + this.settings.idleUs);
    if (due === this.reaperDueUs) return;
    this.reaper?.();
    this.reaper = undefined;
    this.reaperDueUs = due;
    if (due === Infinity) return;
    this.reaper = this.clock.setTimer(() => {
      this.reaper = undefined;
      this.reaperDueUs = Infinity;
      this.reap();
    }, due - this.clock.now());
  }

  private reap(): void {
    const now = this.clock.now();
    for (const [key, ref] of [...this.active]) {
      const seen = this.lastSeenUs.get(key) ?? now;
      if (now - seen < this.settings.idleUs) continue;
      // Requests already queued for it still run; the marker frees the slot after them.
      this.forget(key);
      (this.batchers[ref.instance] as SlotBatcher).push(ref.slot, RELEASE);
    }
    this.armReaper();
  }

  /** Cancels every queued request of `entry`'s sequence (Triton cancels the whole sequence) and frees its slot. */
  private cancelSequence(entry: SequenceEntry): void {
    if (entry.settled) return;
    const where = this.placement.get(entry);
    const cancelled = abortedRequestError(entry.request.signal, REQUEST_CANCELLED_MESSAGE);
    const now = this.clock.now();
    let victims: SequenceEntry[] = [];
    const queued =
      where !== undefined &&
      ('key' in where ? where.entries.includes(entry) : (this.batchers[where.instance] as SlotBatcher).holds(where.slot, entry));
    if (!queued) {
      // Running: answered now, its late result is dropped (a running execution is never interrupted).
      notify(this.options.queueObserver, 'requestCancelledRunning', { id: entry.request.id ?? '', elapsedUs: Math.floor(now - entry.enqueuedUs) });
      entry.settled = true;
      entry.reject(cancelled);
      this.checkDrained();
      return;
    }
    if (where === undefined) return; // unreachable: `queued` implies a placement
    if ('key' in where) {
      const index = this.backlogs.indexOf(where);
      if (index >= 0) this.backlogs.splice(index, 1);
      if (this.backlogByKey.get(where.key) === where) this.backlogByKey.delete(where.key);
      victims = where.entries.splice(0);
    } else {
      const batcher = this.batchers[where.instance] as SlotBatcher;
      victims = batcher.removeSequence(where.slot, entry.key);
      const ref = this.active.get(entry.key);
      if (ref !== undefined && ref.instance === where.instance && ref.slot === where.slot) this.forget(entry.key);
      batcher.push(where.slot, RELEASE);
    }
    for (const victim of victims) {
      if (victim.settled) continue;
      notify(this.options.queueObserver, 'requestLeftQueue', { id: victim.request.id ?? '', reason: 'cancelled', queueUs: Math.floor(now - victim.enqueuedUs) });
      victim.settled = true;
      victim.reject(cancelled);
    }
    this.armReaper();
    this.checkDrained();
  }

  private checkDrained(): void {
    if (!this.stopped || this.queued() > 0 || this.inflight() > 0) return;
    if (this.drainWaiters.length === 0) return;
    this.reaper?.();
    this.reaper = undefined;
    this.reaperDueUs = Infinity;
    for (const batcher of this.batchers) batcher.cancelTimer();
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
