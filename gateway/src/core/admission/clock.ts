// The system clock and a hand-driven one for tests, implementing the Clock port (core/ports/clock.ts).
import type { Clock, TimerHandle } from '../ports/index.js';

/** setTimeout fires at once for delays past 2^31-1 ms; longer waits are capped (they re-arm on expiry). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS)),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** A clock for tests: time moves only through `advance`, which fires due timers in order. */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 1_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Number of armed timers (lets tests prove nothing leaks). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at <= target && (due === undefined || entry[1].at < due[1].at)) due = entry;
      }
      if (due === undefined) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].callback();
    }
    this.current = target;
  }
}
