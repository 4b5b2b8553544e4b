/**
 * The admission queue of one model (or one pinned model version): requests wait here until a node has
 * room, ordered by tier priority (Triton's convention: 1 is served first) and FIFO within a priority.
 *
 * It is pure: no I/O, time from an injected Clock, and the fleet's state through `AdmissionLoad`
 * callbacks. The dispatcher supplies `room()`; see `dispatcher.ts` for its exact definition (free slots
 * summed over the candidate nodes).
 *
 * Rules, in the order they are applied to a newcomer:
 * 1. Deadline already passed, or no node can serve the model (`capacity() === 0`): reject now.
 * 2. Tier share: a tier may hold at most `max(1, floor(share × maxQueue))` waiting entries.
 * 3. Deadline estimate (only when an execution time is known): with `ahead` = waiting entries that
 *    would leave before the newcomer (priority number <= its own), `room`, `capacity` and `exec` from
 *    `AdmissionLoad`:
 *        waves  = ahead + 1 <= room ? 0 : ceil((ahead + 1 - room) / capacity)
 *        waitMs = waves × exec
 *    the request is rejected when `now + waitMs + exec > deadline`: it could not be answered in time
 *    (a decoupled stream with `answerBy`: when it could not leave the queue by `deadline`, or not
 *    complete by `answerBy`).
 *    A wave is one full batch round of every candidate node; the estimate ignores requests that
 *    complete early, so it errs on the side of admitting (the expiry timer is the hard guarantee).
 * 4. Full queue: if some waiting entry belongs to a LOWER tier (larger priority number), the newest
 *    entry of the lowest tier present is evicted (rejected with 503) to make the place; otherwise the
 *    newcomer is rejected. Lower tiers therefore always lose first. (Evicted entries never count in
 *    the newcomer's `ahead`, so checking the deadline first evicts nobody in vain.)
 * Admitted entries leave the queue head-first while `room() > 0`, or are rejected at their deadline
 * by a timer: nothing is ever dispatched after its deadline. A newcomer that finds the queue empty
 * and room free is dispatched at once, without being queued (no timer, no abort listener): the
 * outcome of queueing it and pumping, for less work on the common, unloaded path.
 *
 * Every rejection is a TesseraError UNAVAILABLE (HTTP 503) with `retryAfterMs`, except a client's
 * cancellation (CANCELLED).
 */
import type { CancelSignal } from '../http/cancellation.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { AdmissionObserver, AdmissionRejectReason, Clock, TimerHandle } from '../ports/index.js';
import { MAX_TIMER_MS, systemClock } from './clock.js';

/** The fleet as admission needs it; all three are read at the moment of each decision. */
export interface AdmissionLoad {
  /** How many more requests may be sent to nodes right now (>= 0). */
  room(): number;
  /** Requests the candidate nodes execute at once, summed; 0 when no node can serve the model. */
  capacity(): number;
  /** Expected execution time of one batch in ms, or null when unknown (no deadline estimate then). */
  execTimeMs(): number | null;
}

export interface AdmissionRequest {
  readonly tier: string;
  /** Tier priority: 1 is the highest; larger numbers are served later. */
  readonly priority: number;
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  /**
   * When the answer must be complete, if later than `deadline` (a decoupled stream: it must leave the
   * queue by `deadline`, and may then stream until this); the deadline estimate (rule 3) checks this.
   */
  readonly answerBy?: number;
  /** Largest fraction (0..1] of the queue this tier may occupy. */
  readonly share: number;
  /** Aborting removes a waiting request (rejected with CANCELLED). */
  readonly signal?: CancelSignal;
}

export interface AdmissionHandlers {
  /**
   * Called synchronously when the request leaves the queue. It MUST consume the room it was given
   * before returning (the dispatcher picks a node and counts the request as in flight), because the
   * queue asks `room()` again right after it.
   */
  dispatch(): void;
  reject(error: TesseraError): void;
}

export interface AdmissionQueueOptions {
  /** Model (or `model@version`) name, for messages and the observer. */
  readonly name: string;
  readonly load: AdmissionLoad;
  /** Most waiting entries; default 256. */
  readonly maxQueue?: number;
  /** Retry-After when nothing better is known (no execution time yet); default 1000 ms. */
  readonly defaultRetryAfterMs?: number;
  /** Default: the system clock. */
  readonly clock?: Clock;
  readonly observer?: AdmissionObserver;
}

export const DEFAULT_MAX_QUEUE = 256;
export const DEFAULT_RETRY_AFTER_MS = 1000;

interface Entry {
  readonly request: AdmissionRequest;
  readonly handlers: AdmissionHandlers;
  readonly enqueuedAt: number;
  timer: TimerHandle | undefined;
  onAbort: (() => void) | undefined;
}

export class AdmissionQueue {
  private readonly maxQueue: number;
  private readonly defaultRetryAfterMs: number;
  private readonly clock: Clock;
  /** One FIFO per priority; `priorities` is kept sorted ascending (highest tier first). */
  private readonly lanes = new Map<number, Entry[]>();
  private priorities: number[] = [];
  private readonly perTier = new Map<string, number>();
  private size = 0;
  private pumping = false;
  private closed = false;

  constructor(private readonly options: AdmissionQueueOptions) {
    this.maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
    if (!Number.isSafeInteger(this.maxQueue) || this.maxQueue < 1) {
      throw TesseraError.invalidArg(`admission maxQueue must be a positive integer (got ${this.maxQueue})`);
    }
    this.defaultRetryAfterMs = options.defaultRetryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    this.clock = options.clock ?? systemClock;
  }

  /** Waiting entries. */
  get depth(): number {
    return this.size;
  }

  /** Waiting entries of one tier. */
  depthOf(tier: string): number {
    return this.perTier.get(tier) ?? 0;
  }

  /** Admits, queues or rejects; exactly one of the handlers is called, exactly once (maybe before this returns). */
  admit(request: AdmissionRequest, handlers: AdmissionHandlers): void {
    const now = this.clock.now();
    const { name } = this.options;
    if (this.closed) return this.refuse(request, handlers, 'closed', TesseraError.unavailable('the gateway is shutting down'));
    if (request.signal?.aborted) return this.refuse(request, handlers, 'cancelled', TesseraError.cancelled('the client cancelled the request'));
    if (request.deadline <= now) {
      return this.refuse(request, handlers, 'deadline', this.unavailable(`the request deadline passed before model '${name}' could be queued`));
    }
    const capacity = this.options.load.capacity();
    if (capacity <= 0) {
      return this.refuse(request, handlers, 'no_capacity', this.unavailable(`no node is ready to serve model '${name}'`));
    }
    const allowed = Math.max(1, Math.floor(request.share * this.maxQueue));
    if (this.depthOf(request.tier) >= allowed) {
      return this.refuse(
        request,
        handlers,
        'share_full',
        this.unavailable(`tier '${request.tier}' already holds its share (${allowed}) of the queue of model '${name}'`),
      );
    }
    const exec = this.options.load.execTimeMs();
    if (exec !== null) {
      const waitMs = this.estimateWaitMs(this.aheadOf(request.priority), capacity, exec);
      const answerBy = Math.max(request.deadline, request.answerBy ?? request.deadline);
      if (now + waitMs + exec > answerBy || now + waitMs > request.deadline) {
        return this.refuse(
          request,
          handlers,
          'deadline',
          new TesseraError(
            'UNAVAILABLE',
            `model '${name}' cannot answer before the deadline (estimated ${Math.ceil(waitMs + exec)} ms, ` +
              `${answerBy - now} ms left)`,
            { retryAfterMs: Math.max(1, Math.ceil(waitMs)) },
          ),
        );
      }
    }
    if (this.size >= this.maxQueue) {
      const victim = this.newestOfLowestTier();
      if (victim === undefined || victim.request.priority <= request.priority) {
        return this.refuse(request, handlers, 'queue_full', this.unavailable(`the queue of model '${name}' is full`));
      }
      this.remove(victim);
      this.settleRejected(victim, 'evicted', this.unavailable(`evicted from the queue of model '${name}' by a higher-priority request`));
    }
    if (this.size === 0 && !this.pumping && this.options.load.room() > 0) {
      this.options.observer?.dispatched?.(name, request.tier, 0);
      handlers.dispatch();
      return;
    }
    const entry: Entry = { request, handlers, enqueuedAt: now, timer: undefined, onAbort: undefined };
    this.insert(entry);
    this.armTimer(entry);
    if (request.signal) {
      entry.onAbort = () => {
        this.remove(entry);
        this.settleRejected(entry, 'cancelled', TesseraError.cancelled('the client cancelled the request'));
      };
      request.signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    this.pump();
  }

  /** Dispatches head entries while there is room; call whenever room may have grown. */
  pump(): void {
    // A dispatch handler may complete synchronously and call pump again; the outer loop goes on.
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.size > 0 && this.options.load.room() > 0) {
        const entry = this.head();
        if (entry === undefined) break;
        this.remove(entry);
        this.cleanup(entry);
        this.options.observer?.dispatched?.(this.options.name, entry.request.tier, this.clock.now() - entry.enqueuedAt);
        entry.handlers.dispatch();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Rejects every waiting entry and refuses newcomers. */
  close(): void {
    this.closed = true;
    for (const priority of [...this.priorities]) {
      for (const entry of [...(this.lanes.get(priority) ?? [])]) {
        this.remove(entry);
        this.settleRejected(entry, 'closed', TesseraError.unavailable('the gateway is shutting down'));
      }
    }
  }

  private estimateWaitMs(ahead: number, capacity: number, exec: number): number {
    const room = this.options.load.room();
    const waves = ahead + 1 <= room ? 0 : Math.ceil((ahead + 1 - room) / capacity);
    return waves * exec;
  }

  /** Retry-After for a full queue: about the time the queue needs to drain. */
  private unavailable(message: string): TesseraError {
    const exec = this.options.load.execTimeMs();
    const capacity = this.options.load.capacity();
    const retryAfterMs =
      exec === null || capacity <= 0 ? this.defaultRetryAfterMs : Math.max(1, Math.ceil(Math.ceil((this.size + 1) / capacity) * exec));
    return new TesseraError('UNAVAILABLE', message, { retryAfterMs });
  }

  private aheadOf(priority: number): number {
    let ahead = 0;
    for (const p of this.priorities) {
      if (p > priority) break;
      ahead += this.lanes.get(p)?.length ?? 0;
    }
    return ahead;
  }

  private head(): Entry | undefined {
    for (const p of this.priorities) {
      const lane = this.lanes.get(p);
      if (lane && lane.length > 0) return lane[0];
    }
    return undefined;
  }

  private newestOfLowestTier(): Entry | undefined {
    for (let i = this.priorities.length - 1; i >= 0; i--) {
      const lane = this.lanes.get(this.priorities[i]!);
      if (lane && lane.length > 0) return lane[lane.length - 1];
    }
    return undefined;
  }

  private insert(entry: Entry): void {
    const p = entry.request.priority;
    let lane = this.lanes.get(p);
    if (lane === undefined) {
      lane = [];
      this.lanes.set(p, lane);
      this.priorities = [...this.priorities, p].sort((a, b) => a - b);
    }
    lane.push(entry);
    this.size++;
    this.perTier.set(entry.request.tier, this.depthOf(entry.request.tier) + 1);
  }

  private remove(entry: Entry): void {
    const p = entry.request.priority;
    const lane = this.lanes.get(p);
    const index = lane?.indexOf(entry) ?? -1;
    if (lane === undefined || index < 0) return;
    lane.splice(index, 1);
    if (lane.length === 0) {
      this.lanes.delete(p);
      this.priorities = this.priorities.filter((q) => q !== p);
    }
    this.size--;
    const left = this.depthOf(entry.request.tier) - 1;
    if (left > 0) this.perTier.set(entry.request.tier, left);
    else this.perTier.delete(entry.request.tier);
  }

  private armTimer(entry: Entry): void {
    const delay = entry.request.deadline - this.clock.now();
    entry.timer = this.clock.setTimeout(() => {
      entry.timer = undefined;
      // A deadline beyond the longest timer re-arms instead of firing early.
      if (this.clock.now() < entry.request.deadline) return this.armTimer(entry);
      this.remove(entry);
      this.settleRejected(
        entry,
        'expired',
        this.unavailable(`the request waited in the queue of model '${this.options.name}' until its deadline`),
      );
    }, Math.min(delay, MAX_TIMER_MS));
  }

  private cleanup(entry: Entry): void {
    if (entry.timer !== undefined) this.clock.clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.onAbort) entry.request.signal?.removeEventListener('abort', entry.onAbort);
    entry.onAbort = undefined;
  }

  private settleRejected(entry: Entry, reason: AdmissionRejectReason, error: TesseraError): void {
    this.cleanup(entry);
    this.refuse(entry.request, entry.handlers, reason, error);
  }

  private refuse(request: AdmissionRequest, handlers: AdmissionHandlers, reason: AdmissionRejectReason, error: TesseraError): void {
    this.options.observer?.rejected?.(this.options.name, request.tier, reason);
    rejectReasons.set(error, reason);
    handlers.reject(error);
  }
}

/** Why admission refused with this error (the very object `reject` got), e.g. for async-job spill-over. */
const rejectReasons = new WeakMap<object, AdmissionRejectReason>();

export function admissionRejectReasonOf(error: unknown): AdmissionRejectReason | undefined {
  return typeof error === 'object' && error !== null ? rejectReasons.get(error) : undefined;
}
