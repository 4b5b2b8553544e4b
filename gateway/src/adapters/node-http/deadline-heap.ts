/**
 * Many calls' deadlines on one timer (raw-infer-exchange.ts). Why: a `setTimeout` per call with its own
 * duration makes node a new timer list per call (a priority-queue insert and removal: ~20 µs of a 150/s
 * miss in issue 17's profile). Here a call's deadline is a heap entry; a settled call only marks its
 * entry dead (removed when it reaches the top, or when dead entries outnumber live ones), and the one
 * timer is moved only when a deadline earlier than the armed one comes. The timer is unref'd: a call
 * in flight keeps the process alive by its socket, a stale timer must not.
 */

export interface Expiring {
  /** Called once, when the deadline passed and the entry was not cancelled. */
  expire(): void;
}

export interface DeadlineEntry {
  readonly at: number;
  target: Expiring | undefined;
}

/** Dead entries kept before the heap is rebuilt from the live ones (amortised O(1) per call). */
const COMPACT_ABOVE = 256;

export class DeadlineHeap {
  private heap: DeadlineEntry[] = [];
  private live = 0;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private readonly fire = (): void => this.expireDue();

  constructor(private readonly now: () => number = Date.now) {}

  /** `target.expire()` at `at` (ms, `now`'s clock) unless cancelled first. */
  add(at: number, target: Expiring): DeadlineEntry {
    const entry: DeadlineEntry = { at, target };
    this.push(entry);
    this.live += 1;
    if (at < this.armedAt) this.arm(at);
    return entry;
  }

  cancel(entry: DeadlineEntry): void {
    if (entry.target === undefined) return;
    entry.target = undefined;
    this.live -= 1;
    if (this.heap.length > 2 * this.live + COMPACT_ABOVE) this.compact();
  }

  /** Entries in the heap, dead ones included (tests: memory stays bounded). */
  get size(): number {
    return this.heap.length;
  }

  private expireDue(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (top.target !== undefined && top.at > now) break;
      this.pop();
      const target = top.target;
      if (target === undefined) continue;
      top.target = undefined;
      this.live -= 1;
      target.expire();
    }
    if (this.heap.length > 0) this.arm(this.heap[0]!.at);
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(this.fire, Math.max(0, at - this.now()));
    this.timer.unref();
  }

  private compact(): void {
    const kept = this.heap.filter((entry) => entry.target !== undefined);
    kept.sort((a, b) => a.at - b.at); // a sorted array is a heap
    this.heap = kept;
  }

  private push(entry: DeadlineEntry): void {
    const heap = this.heap;
    let at = heap.length;
    heap.push(entry);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[at] = heap[parent]!;
      at = parent;
    }
    heap[at] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
      if (heap[child]!.at >= last.at) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = last;
  }
}
