/**
 * The deadlines of the upstream calls in flight (h2-call.ts), on one Node timer for all of them.
 *
 * Why: a timer per call cost every miss a Timeout object, and since each call's remaining time differs
 * by a millisecond or so, a timer list of its own, created, queued and dropped around the call (Node
 * keeps one list per duration). Calls mostly carry the same timeout, so a new deadline is nearly always
 * the latest: it is linked at the tail in O(1), removed in O(1) when the call ends, and the one timer,
 * armed for the earliest deadline, is moved only when a call brings an earlier one. When it fires for a
 * call that already ended, it is re-armed for the earliest deadline left: about once per timeout.
 *
 * The timer keeps the process alive while a call is in flight and not once none is (ref/unref), as the
 * per-call timers did. Entries are unlinked when their call ends, so nothing of a finished call is held.
 */

/** One call's deadline; `cancel` it when the call ends first. */
export class DeadlineEntry {
  prev: DeadlineEntry | undefined = undefined;
  next: DeadlineEntry | undefined = undefined;
  linked = true;

  constructor(
    /** ms since the epoch. */
    readonly at: number,
    readonly onExpired: () => void,
  ) {}
}

export class CallDeadlines {
  private head: DeadlineEntry | undefined = undefined;
  private tail: DeadlineEntry | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** When the armed timer fires (ms since the epoch); Infinity when none is armed. */
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly now: () => number = Date.now) {}

  /** Calls `onExpired` once `at` (ms since the epoch) has passed, unless `cancel`led before. */
  add(at: number, onExpired: () => void): DeadlineEntry {
    const entry = new DeadlineEntry(at, onExpired);
    const wasEmpty = this.head === undefined;
    let before = this.tail;
    while (before !== undefined && before.at > at) before = before.prev;
    entry.prev = before;
    entry.next = before === undefined ? this.head : before.next;
    if (entry.next === undefined) this.tail = entry;
    else entry.next.prev = entry;
    if (before === undefined) this.head = entry;
    else before.next = entry;
    if (at < this.timerAt) this.arm(at);
    else if (wasEmpty) this.timer?.ref();
    return entry;
  }

  cancel(entry: DeadlineEntry): void {
    if (!entry.linked) return;
    this.unlink(entry);
    if (this.head === undefined) this.timer?.unref();
  }

  /** Deadlines waiting (for tests and diagnostics). */
  get size(): number {
    let n = 0;
    for (let e = this.head; e !== undefined; e = e.next) n++;
    return n;
  }

  private unlink(entry: DeadlineEntry): void {
    entry.linked = false;
    if (entry.prev === undefined) this.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) this.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = entry.next = undefined;
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.fire, Math.max(0, at - this.now()));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const expired: DeadlineEntry[] = [];
    while (this.head !== undefined && this.head.at <= now) {
      const entry = this.head;
      this.unlink(entry);
      expired.push(entry);
    }
    // Re-armed before the callbacks run, so one that throws cannot leave the later deadlines unwatched.
    if (this.head !== undefined) this.arm(this.head.at);
    for (const entry of expired) entry.onExpired();
  };
}
