/**
 * A manual clock for deterministic tests: time stands still until `advance` moves it, and timers fire
 * in due-time order (ties in the order they were set), each with `now()` equal to its due time.
 */
import type { CancelTimer, Clock } from './clock.js';

interface FakeTimer {
  readonly dueUs: number;
  readonly order: number;
  readonly fn: () => void;
}

/** Lets every pending promise callback run (a macrotask boundary drains the microtask queue). */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private current: number;
  private readonly timers = new Set<FakeTimer>();
  private nextOrder = 0;

  constructor(startUs = 0) {
    this.current = startUs;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayUs: number): CancelTimer {
    const timer: FakeTimer = { dueUs: this.current + Math.max(0, delayUs), order: this.nextOrder++, fn };
    this.timers.add(timer);
    return () => {
      this.timers.delete(timer);
    };
  }

  /** Timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `us`, firing every timer that falls due on the way — including timers set by
   * the callbacks themselves. Promise callbacks are drained before and after each timer, so work a timer
   * starts (a batch execution, a response) settles at the time it would in a real run.
   */
  async advance(us: number): Promise<void> {
    const target = this.current + us;
    await flushPromises();
    for (;;) {
      const next = this.earliest();
      if (next === undefined || next.dueUs > target) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.dueUs);
      next.fn();
      await flushPromises();
    }
    this.current = target;
    await flushPromises();
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (best === undefined || t.dueUs < best.dueUs || (t.dueUs === best.dueUs && t.order < best.order)) best = t;
    }
    return best;
  }
}
