/**
 * Triton's PriorityQueue: one FIFO policy queue per priority level, served from the lowest level number
 * (highest priority) upward. Each level applies its ModelQueuePolicy: a bounded size, and a deadline
 * after which a request is rejected (REJECT) or demoted to the level's delayed queue (DELAY), which is
 * served after every unexpired request of that level and before the next level.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { DynamicBatcherOptions, QueuePolicy } from './batcher-options.js';
import { schedulerError } from '../scheduler-errors.js';

/** What the queue needs of a request; the batcher's own entries extend this. */
export interface QueueEntry {
  readonly id: string;
  readonly batchSize: number;
  /** Requests with different signatures never share a batch (see batchSignature). */
  readonly signature: string;
  readonly enqueuedUs: number;
  /** Absolute time after which the level's timeout action applies; undefined = never. */
  readonly deadlineUs: number | undefined;
  readonly level: number;
}

export interface Admission {
  readonly level: number;
  readonly deadlineUs: number | undefined;
}

class PolicyQueue<E> {
  readonly unexpired: E[] = [];
  readonly delayed: E[] = [];

  constructor(
    readonly policy: QueuePolicy,
    /** Levels named in priority_queue_policy live for the model's lifetime; others come and go. */
    readonly permanent: boolean,
  ) {}

  get size(): number {
    return this.unexpired.length + this.delayed.length;
  }
}

/** The "[request id: <id>] " prefix Triton puts on request errors; nothing when the id is empty. */
export function requestPrefix(id: string): string {
  return id === '' ? '' : `[request id: ${id}] `;
}

function removeFrom<E>(list: E[], entry: E): boolean {
  const i = list.indexOf(entry);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

export class PriorityQueue<E extends QueueEntry> implements Iterable<E> {
  private readonly levels = new Map<number, PolicyQueue<E>>();
  /** Level numbers in serving order (ascending). */
  private order: number[] = [];
  private count = 0;
  private cachedDeadline: number | undefined;
  private deadlineDirty = false;

  constructor(private readonly options: DynamicBatcherOptions) {
    if (options.priorityLevels === 0) {
      this.createLevel(0, options.defaultQueuePolicy, true);
    } else {
      for (const [level, policy] of options.priorityQueuePolicy) this.createLevel(level, policy, true);
    }
  }

  /** Requests waiting, delayed ones included. */
  get size(): number {
    return this.count;
  }

  /** Requests waiting at one level (what max_queue_size limits). */
  levelSize(level: number): number {
    return this.levels.get(level)?.size ?? 0;
  }

  /** Triton's SetPriority: 0, or anything beyond priority_levels, means the default level. */
  levelOf(priority: number | undefined): number {
    const levels = this.options.priorityLevels;
    if (levels === 0) return 0;
    const p = Math.floor(priority ?? 0);
    if (p <= 0 || p > levels) return Math.min(Math.max(this.options.defaultPriorityLevel, 1), levels);
    return p;
  }

  policyOf(level: number): QueuePolicy {
    if (this.options.priorityLevels === 0) return this.options.defaultQueuePolicy;
    return this.options.priorityQueuePolicy.get(level) ?? this.options.defaultQueuePolicy;
  }

  /**
   * Decides a new request's level and deadline, or throws UNAVAILABLE when its level is full. The
   * deadline counts from batcher enqueue; a per-request timeout only applies when the policy allows an
   * override and the value is non-zero and shorter than the default — so a default of 0 ignores it.
   */
  admit(id: string, priority: number | undefined, timeoutUs: number | undefined, nowUs: number): Admission {
    const level = this.levelOf(priority);
    const policy = this.policyOf(level);
    if (policy.maxQueueSize !== 0 && this.levelSize(level) >= policy.maxQueueSize) {
      // Refused before queueing: Triton counts no failure for it (the scheduler marks it so).
      throw schedulerError(TesseraError.unavailable(`${requestPrefix(id)}Exceeds maximum queue size`));
    }
    let timeout = policy.defaultTimeoutUs;
    const requested = timeoutUs ?? 0;
    if (policy.allowTimeoutOverride && requested > 0 && requested < timeout) timeout = requested;
    return { level, deadlineUs: timeout !== 0 ? nowUs + timeout : undefined };
  }

  push(entry: E): void {
    const queue = this.levels.get(entry.level) ?? this.createLevel(entry.level, this.policyOf(entry.level), false);
    queue.unexpired.push(entry);
    this.count += 1;
    if (entry.deadlineUs !== undefined && !this.deadlineDirty) {
      this.cachedDeadline = Math.min(this.cachedDeadline ?? Infinity, entry.deadlineUs);
    }
  }

  /** Removes a waiting request (cancellation); false when it is not queued any more. */
  remove(entry: E): boolean {
    const queue = this.levels.get(entry.level);
    if (queue === undefined) return false;
    if (!removeFrom(queue.unexpired, entry) && !removeFrom(queue.delayed, entry)) return false;
    this.count -= 1;
    this.deadlineDirty = true;
    this.dropIfEmpty(entry.level, queue);
    return true;
  }

  /** The earliest deadline among unexpired requests: when `expire` next has something to do. */
  nextDeadline(): number | undefined {
    if (this.deadlineDirty) {
      let min: number | undefined;
      for (const queue of this.levels.values()) {
        for (const e of queue.unexpired) {
          if (e.deadlineUs !== undefined && (min === undefined || e.deadlineUs < min)) min = e.deadlineUs;
        }
      }
      this.cachedDeadline = min;
      this.deadlineDirty = false;
    }
    return this.cachedDeadline;
  }

  /**
   * Applies every level's timeout action to the requests whose deadline has passed: DELAY moves them,
   * in queue order, to the level's delayed queue; REJECT removes them and returns them to the caller.
   */
  expire(nowUs: number): E[] {
    const next = this.nextDeadline();
    if (next === undefined || nowUs < next) return [];
    const rejected: E[] = [];
    for (const level of [...this.order]) {
      const queue = this.levels.get(level);
      if (queue === undefined) continue;
      const keep: E[] = [];
      for (const e of queue.unexpired) {
        if (e.deadlineUs === undefined || nowUs < e.deadlineUs) keep.push(e);
        else if (queue.policy.timeoutAction === 'DELAY') queue.delayed.push(e);
        else rejected.push(e);
      }
      queue.unexpired.splice(0, queue.unexpired.length, ...keep);
      this.dropIfEmpty(level, queue);
    }
    this.count -= rejected.length;
    this.deadlineDirty = true;
    return rejected;
  }

  /** Requests in serving order: by level, then unexpired before delayed, FIFO within each. */
  *[Symbol.iterator](): Iterator<E> {
    for (const level of this.order) {
      const queue = this.levels.get(level);
      if (queue === undefined) continue;
      yield* queue.unexpired;
      yield* queue.delayed;
    }
  }

  /**
   * The same order as iterating the queue, but when a single list holds every request (one level, none
   * delayed: the usual case) that list itself: formBatch walks the queue after every arrival, and a walk of
   * an array costs no generator objects.
   */
  inServingOrder(): Iterable<E> {
    if (this.order.length !== 1) return this;
    const queue = this.levels.get(this.order[0]!);
    return queue === undefined || queue.delayed.length !== 0 ? this : queue.unexpired;
  }

  /** Removes and returns the first `n` requests in serving order (a batch is always such a prefix). */
  take(n: number): E[] {
    const taken: E[] = [];
    for (const level of [...this.order]) {
      const queue = this.levels.get(level);
      if (queue === undefined) continue;
      for (const list of [queue.unexpired, queue.delayed]) {
        const k = Math.min(n - taken.length, list.length);
        taken.push(...list.splice(0, k));
      }
      this.dropIfEmpty(level, queue);
      if (taken.length === n) break;
    }
    this.count -= taken.length;
    this.deadlineDirty = true;
    return taken;
  }

  private createLevel(level: number, policy: QueuePolicy, permanent: boolean): PolicyQueue<E> {
    const queue = new PolicyQueue<E>(policy, permanent);
    this.levels.set(level, queue);
    this.order = [...this.levels.keys()].sort((a, b) => a - b);
    return queue;
  }

  private dropIfEmpty(level: number, queue: PolicyQueue<E>): void {
    if (queue.permanent || queue.size !== 0) return;
    this.levels.delete(level);
    this.order = this.order.filter((l) => l !== level);
  }
}
