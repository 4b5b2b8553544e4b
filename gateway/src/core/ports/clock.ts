/**
 * The time source of admission and routing, injected so that tests drive time by hand instead of
 * sleeping (systemClock and FakeClock are in core/admission/clock.ts).
 */
export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}
