/**
 * The sequence batcher of one model instance (Triton's DirectSequenceBatch / OldestSequenceBatch): a
 * fixed number of slots, each with the FIFO queue of the sequence it serves, and one batch in flight at
 * a time (the instance is one worker executing one batch after another anyway).
 *
 * - direct: every batch takes the next request of each slot 0..max active slot; a slot with nothing
 *   ready (or whose next request's shapes differ from the batch's) gets a null request with READY
 *   false, so each sequence keeps its row of the batch. With max_queue_delay and
 *   minimum_slot_utilization the batch waits for enough ready slots or for the delay.
 * - oldest: the oldest next-requests of the candidate slots, up to max_batch_size (a preferred size
 *   when one can be formed, else everything after max_queue_delay); no padding, rows not stable. A
 *   sequence never has two requests in flight: only a slot's front request can join, once per batch.
 *
 * The implicit state lives with the slot: a START request resets it to the initial state, each
 * successful request replaces it with the state output the model returned.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import { formatShape } from '../../../../shared/src/tensors/index.js';
import type { BackendInstance, ExecutionBatchResult, ExecutionRequest } from '../../backends/backend.js';
import { notify, type BatcherObserver } from '../dynamic/batcher-observer.js';
import type { CancelTimer, Clock } from '../dynamic/clock.js';
import type { ExecutionObserver, ScheduledRequest, ScheduledResult } from '../scheduler.js';
import type { CorrelationId } from './correlation-id.js';
import type { SequenceSettings } from './sequence-settings.js';
import { initialStates, nullExecution, sequenceExecution, takeStates, type SequenceStates } from './sequence-tensors.js';

/** A client request accepted by the sequence scheduler, until it is answered. */
export interface SequenceEntry {
  readonly request: ScheduledRequest;
  readonly id: CorrelationId;
  /** correlationKey(id) */
  readonly key: string;
  readonly start: boolean;
  readonly end: boolean;
  readonly enqueuedUs: number;
  settled: boolean;
  resolve(value: ScheduledResult): void;
  reject(error: TesseraError): void;
}

/** Queued behind a slot's requests by the idle reaper or a cancellation: frees the slot when reached. */
export const RELEASE = Symbol('release slot');
export type SlotItem = SequenceEntry | typeof RELEASE;

export interface SlotBatcherEnv {
  readonly settings: SequenceSettings;
  readonly clock: Clock;
  readonly observer?: ExecutionObserver;
  readonly queueObserver?: BatcherObserver;
  /** The slot has no sequence any more: hand it to a backlog or put it back among the free slots. */
  slotReleased(instance: number, slot: number): void;
  /** An execution finished (the scheduler checks whether it has drained). */
  executionDone(): void;
}

interface Slot {
  readonly index: number;
  readonly queue: SlotItem[];
  /** Holds a sequence (assigned and not yet released). */
  active: boolean;
  states: SequenceStates | undefined;
}

interface Row {
  readonly slot: Slot;
  /** undefined: a null request padding an empty slot. */
  readonly entry?: SequenceEntry;
}

function shapeKey(execution: ExecutionRequest): string {
  return execution.inputs.map((t) => `${t.name}${formatShape(t.shape.slice(1))}`).join(';');
}

export class SlotBatcher {
  private readonly slots: Slot[];
  private running: SequenceEntry[] = [];
  private busy = false;
  private scheduling = false;
  private again = false;
  private timer: CancelTimer | undefined;
  private timerDueUs = Infinity;

  constructor(
    readonly index: number,
    private readonly instance: BackendInstance,
    private readonly env: SlotBatcherEnv,
  ) {
    this.slots = Array.from({ length: env.settings.slotsPerInstance }, (_, i) => ({ index: i, queue: [], active: false, states: undefined }));
  }

  /** The scheduler gave `slot` to a sequence. */
  assign(slot: number): void {
    this.slot(slot).active = true;
  }

  push(slot: number, item: SlotItem): void {
    this.slot(slot).queue.push(item);
    this.schedule();
  }

  /** Removes the queued requests of sequence `key` from `slot` (a cancellation); returns them. */
  removeSequence(slot: number, key: string): SequenceEntry[] {
    const queue = this.slot(slot).queue;
    const removed: SequenceEntry[] = [];
    for (let i = queue.length - 1; i >= 0; i--) {
      const item = queue[i];
      if (item !== RELEASE && item !== undefined && item.key === key) removed.unshift(...queue.splice(i, 1).filter((x) => x !== RELEASE));
    }
    return removed;
  }

  /** Whether `entry` is waiting in `slot`'s queue. */
  holds(slot: number, entry: SequenceEntry): boolean {
    return this.slot(slot).queue.includes(entry);
  }

  queued(): number {
    return this.slots.reduce((n, s) => n + s.queue.filter((item) => item !== RELEASE).length, 0);
  }

  inflight(): number {
    return this.running.length;
  }

  /** No batch running and nothing queued (release markers included). */
  idle(): boolean {
    return !this.busy && this.slots.every((s) => s.queue.length === 0);
  }

  cancelTimer(): void {
    this.timer?.();
    this.timer = undefined;
    this.timerDueUs = Infinity;
  }

  private slot(index: number): Slot {
    const slot = this.slots[index];
    if (slot === undefined) throw TesseraError.internal(`sequence slot ${index} does not exist on instance ${this.index}`);
    return slot;
  }

  /**
   * Forms and starts a batch when the instance is free. Re-entrant calls (a released slot handed to a
   * backlog pushes into this batcher while it is scheduling) just ask for one more pass.
   */
  private schedule(): void {
    if (this.scheduling) {
      this.again = true;
      return;
    }
    this.scheduling = true;
    try {
      do {
        this.again = false;
        this.releaseMarkedSlots();
        if (!this.busy) {
          const rows = this.env.settings.strategy === 'direct' ? this.directRows() : this.oldestRows();
          if (rows !== undefined) void this.run(rows);
        }
      } while (this.again);
    } finally {
      this.scheduling = false;
    }
  }

  /** Release markers at the front of a queue take effect at once (no request of that sequence is left ahead). */
  private releaseMarkedSlots(): void {
    for (const slot of this.slots) {
      while (slot.queue[0] === RELEASE) {
        slot.queue.shift();
        this.release(slot);
      }
    }
  }

  private release(slot: Slot): void {
    slot.active = false;
    slot.states = undefined;
    this.env.slotReleased(this.index, slot.index);
  }

  private front(slot: Slot): SequenceEntry | undefined {
    const item = slot.queue[0];
    return item === undefined || item === RELEASE ? undefined : item;
  }

  /** Waits until `dueUs` (the queue delay) unless a wake-up at or before it is already set. */
  private wakeAt(dueUs: number): void {
    if (this.timer !== undefined && this.timerDueUs <= dueUs) return;
    this.cancelTimer();
    this.timerDueUs = dueUs;
    this.timer = this.env.clock.setTimer(() => {
      this.timer = undefined;
      this.timerDueUs = Infinity;
      this.schedule();
    }, dueUs - this.env.clock.now());
  }

  private directRows(): Row[] | undefined {
    const { settings, clock } = this.env;
    let maxActive = -1;
    for (const slot of this.slots) if (slot.active || slot.queue.length > 0) maxActive = slot.index;
    const candidates = this.slots.slice(0, maxActive + 1);
    const ready = candidates.filter((slot) => this.front(slot) !== undefined);
    if (ready.length === 0) return undefined;
    if (settings.maxQueueDelayUs > 0 && settings.minimumSlotUtilization > 0) {
      const oldest = Math.min(...ready.map((slot) => (this.front(slot) as SequenceEntry).enqueuedUs));
      const due = oldest + settings.maxQueueDelayUs;
      if (ready.length / this.slots.length < settings.minimumSlotUtilization && clock.now() < due) {
        this.wakeAt(due);
        return undefined;
      }
    }
    // The lowest ready slot fixes the input shapes; a slot whose next request differs waits a round.
    const shapes = shapeKey((this.front(ready[0] as Slot) as SequenceEntry).request.execution);
    return candidates.map((slot) => {
      const entry = this.front(slot);
      if (entry === undefined || shapeKey(entry.request.execution) !== shapes) return { slot };
      slot.queue.shift();
      return { slot, entry };
    });
  }

  private oldestRows(): Row[] | undefined {
    const { settings, clock } = this.env;
    const ready = this.slots
      .filter((slot) => this.front(slot) !== undefined)
      .sort((a, b) => (this.front(a) as SequenceEntry).enqueuedUs - (this.front(b) as SequenceEntry).enqueuedUs);
    if (ready.length === 0) return undefined;
    const shapes = shapeKey((this.front(ready[0] as Slot) as SequenceEntry).request.execution);
    const fitting = ready.filter((slot) => shapeKey((this.front(slot) as SequenceEntry).request.execution) === shapes);
    const limit = Math.max(1, settings.maxBatchSize);
    const preferred = settings.preferredBatchSizes.length > 0 ? settings.preferredBatchSizes : [limit];
    const best = Math.max(0, ...preferred.filter((size) => size <= fitting.length && size <= limit));
    const due = (this.front(fitting[0] as Slot) as SequenceEntry).enqueuedUs + settings.maxQueueDelayUs;
    const delayExceeded = settings.maxQueueDelayUs > 0 && clock.now() >= due;
    let take: number;
    if (best > 0 && !delayExceeded) take = best;
    else if (settings.maxQueueDelayUs === 0 || delayExceeded) take = Math.min(limit, fitting.length);
    else {
      this.wakeAt(due);
      return undefined;
    }
    return fitting.slice(0, take).map((slot) => ({ slot, entry: slot.queue.shift() as SequenceEntry }));
  }

  private async run(rows: Row[]): Promise<void> {
    const { settings, clock, queueObserver, observer } = this.env;
    this.busy = true;
    const now = clock.now();
    const real = rows.filter((row): row is Required<Row> => row.entry !== undefined);
    const executions: ExecutionRequest[] = [];
    const ended: Slot[] = [];
    for (const row of rows) {
      if (row.entry === undefined) continue;
      const entry = row.entry;
      if (entry.start || row.slot.states === undefined) row.slot.states = initialStates(settings);
      notify(queueObserver, 'requestLeftQueue', { id: entry.request.id ?? '', reason: 'scheduled', queueUs: Math.floor(now - entry.enqueuedUs) });
      if (entry.end) ended.push(row.slot);
    }
    const template = (real[0] as Required<Row>).entry.request.execution;
    for (const row of rows) {
      if (row.entry === undefined) executions.push(nullExecution(settings, template));
      else {
        const flags = { start: row.entry.start, end: row.entry.end, ready: true, id: row.entry.id };
        executions.push(sequenceExecution(settings, row.entry.request.execution, flags, row.slot.states as SequenceStates));
      }
    }
    this.running = real.map((row) => row.entry);
    // Triton frees a slot as soon as its END request is in a batch: the next sequence (from the backlog)
    // queues behind it, and its START resets the state before it runs.
    for (const slot of ended) this.release(slot);

    let batch: ExecutionBatchResult;
    try {
      batch = await this.instance.execute(executions);
      if (batch.results.length !== executions.length) {
        throw TesseraError.internal(
          `backend returned ${batch.results.length} results for an execution of ${executions.length} requests on '${this.instance.spec.name}'`,
        );
      }
    } catch (error) {
      const failure = toTesseraError(error);
      batch = { results: executions.map(() => ({ error: failure })), timing: { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 } };
    }
    observer?.executionFinished(real.length, batch.timing);
    rows.forEach((row, i) => {
      const entry = row.entry;
      if (entry === undefined) return;
      const taken = takeStates(settings, batch.results[i] as ExecutionBatchResult['results'][number], entry.id);
      // The slot still serves this sequence unless its END went out in this batch.
      if (taken.states !== undefined && !entry.end) row.slot.states = taken.states;
      if (entry.settled) return; // cancelled while running: answered already
      entry.settled = true;
      entry.resolve({ result: taken.result, queueNs: (now - entry.enqueuedUs) * 1000, timing: batch.timing });
    });
    this.running = [];
    this.busy = false;
    this.schedule();
    this.env.executionDone();
  }
}
