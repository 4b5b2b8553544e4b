/**
 * The dispatcher's admission queues, one per (model, version), and their pumping: a queue releases a
 * request when its nodes have room (node-load.ts), so it is pumped after every upstream call settles,
 * on fleet changes, and every `pumpIntervalMs` while requests wait (load reports and half-open
 * breakers change the room without telling us).
 */
import { AdmissionQueue } from '../admission/index.js';
import type { Clock, DispatchObserver, NodeView, TimerHandle } from '../ports/index.js';
import { modelLoadOf, reportedExecTimeMs, room } from './node-load.js';

export interface ModelQueue {
  readonly model: string;
  readonly version: string | undefined;
  readonly queue: AdmissionQueue;
}

export interface ModelQueuesOptions {
  readonly clock: Clock;
  readonly pumpIntervalMs: number;
  readonly overcommit: number;
  /** The nodes a request for (model, version) may go to now. */
  readonly eligible: (model: string, version: string | undefined) => NodeView[];
  /** Measured upstream time of the model, for estimates when no node reports one. */
  readonly measuredExecMs: (model: string) => number | undefined;
  readonly maxQueue?: number;
  readonly defaultRetryAfterMs?: number;
  readonly observer?: DispatchObserver;
}

export class ModelQueues {
  private readonly queues = new Map<string, ModelQueue>();
  private pumpTimer: TimerHandle | undefined;
  private closed = false;

  constructor(private readonly options: ModelQueuesOptions) {}

  queueFor(model: string, version: string | undefined): ModelQueue {
    const key = version === undefined ? model : `${model}\u0000${version}`;
    let entry = this.queues.get(key);
    if (entry === undefined) {
      const { clock, eligible, overcommit, observer } = this.options;
      const queue = new AdmissionQueue({
        name: version === undefined ? model : `${model}@${version}`,
        clock,
        ...(this.options.maxQueue !== undefined ? { maxQueue: this.options.maxQueue } : {}),
        ...(this.options.defaultRetryAfterMs !== undefined ? { defaultRetryAfterMs: this.options.defaultRetryAfterMs } : {}),
        ...(observer !== undefined ? { observer } : {}),
        load: {
          room: () => eligible(model, version).reduce((sum, node) => sum + room(node, model, overcommit), 0),
          capacity: () => eligible(model, version).reduce((sum, node) => sum + Math.max(1, modelLoadOf(node, model).capacity), 0),
          execTimeMs: () => reportedExecTimeMs(eligible(model, version), model) ?? this.options.measuredExecMs(model) ?? null,
        },
      });
      entry = { model, version, queue };
      this.queues.set(key, entry);
    }
    return entry;
  }

  /** Pumps the queues of `model` (all when undefined), then keeps pumping while requests wait. */
  pumpAll(model?: string): void {
    for (const entry of this.queues.values()) {
      if (model === undefined || entry.model === model) entry.queue.pump();
    }
    this.schedulePump();
  }

  /** A pump after `pumpIntervalMs`, when some request waits and none is scheduled. */
  schedulePump(): void {
    if (this.closed || this.pumpTimer !== undefined) return;
    if (![...this.queues.values()].some((entry) => entry.queue.depth > 0)) return;
    this.pumpTimer = this.options.clock.setTimeout(() => {
      this.pumpTimer = undefined;
      this.pumpAll();
    }, this.options.pumpIntervalMs);
  }

  /** Requests waiting for the model, all versions together. */
  depth(model: string): number {
    let sum = 0;
    for (const entry of this.queues.values()) if (entry.model === model) sum += entry.queue.depth;
    return sum;
  }

  /** Rejects everything waiting (503) and stops pumping. */
  close(): void {
    this.closed = true;
    if (this.pumpTimer !== undefined) this.options.clock.clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    for (const entry of this.queues.values()) entry.queue.close();
  }
}
