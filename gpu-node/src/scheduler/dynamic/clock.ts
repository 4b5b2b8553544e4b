/**
 * Time as the dynamic batcher sees it. Everything time-dependent in the batcher (queue delay, request
 * deadlines, queue-time metrics) goes through this port, so tests can drive it with a FakeClock and get
 * exactly the same decisions on every run.
 */

/** Cancels a timer; calling it after the timer fired, or twice, is harmless. */
export type CancelTimer = () => void;

export interface Clock {
  /** Monotonic time in microseconds (may be fractional). Only differences are meaningful. */
  now(): number;
  /** Runs `fn` once, no earlier than `delayUs` microseconds from now. */
  setTimer(fn: () => void, delayUs: number): CancelTimer;
}

/**
 * The process clock. Node timers have millisecond resolution, so a sub-millisecond delay waits up to
 * one millisecond: the batcher re-checks the clock when woken, so an early-rounded wake-up cannot
 * happen and a late one only costs latency, never correctness.
 */
export const realClock: Clock = {
  now: () => performance.now() * 1000,
  setTimer(fn, delayUs) {
    const handle = setTimeout(fn, Math.max(0, Math.ceil(delayUs / 1000)));
    return () => clearTimeout(handle);
  },
};
