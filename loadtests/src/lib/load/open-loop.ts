/**
 * Open-loop load (perf_analyzer's `--request-rate-range`): requests are sent at *intended* times drawn
 * from a schedule (arrival-gaps.ts), whether or not earlier ones have answered, and each latency is
 * measured from its intended send time, not from when it actually left. So a server that stalls, or an
 * event loop that fires the timer late, shows up as latency instead of silently lowering the load
 * (coordinated omission: a closed loop, or an open loop timing from the actual send, would hide it).
 *
 * The number of outstanding requests is capped, so an overloaded server cannot make the generator
 * open sockets without bound; an intended send that finds the cap reached is dropped and counted, and
 * a point with drops did not deliver its offered rate.
 *
 * The timer wakes for the next intended time and sends every request whose time has come (several
 * per wake-up at high rates, as setTimeout has millisecond granularity).
 */
import { WindowRecorder, type CallTiming, type RunningLoad } from './load-window.js';

export interface OpenLoadOptions {
  /** The next gap between intended send times, in milliseconds. */
  readonly nextGapMs: () => number;
  readonly maxOutstanding: number;
  readonly call: (seq: number) => Promise<CallTiming | void>;
  /** How many tags requests cycle through (seq % tags); default 1. */
  readonly tags?: number;
}

export interface RunningOpenLoad extends RunningLoad {
  outstanding(): number;
}

export function startOpenLoad(options: OpenLoadOptions): RunningOpenLoad {
  const recorder = new WindowRecorder(options.tags ?? 1);
  let running = true;
  let outstanding = 0;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let drained: (() => void) | undefined;
  let nextIntended = performance.now();

  const send = (intended: number): void => {
    const mine = seq++;
    outstanding += 1;
    recorder.sent();
    options.call(mine).then(
      (timing) => recorder.success((performance.now() - intended) * 1000, mine, timing),
      (error: unknown) => recorder.failure(error, mine),
    ).finally(() => {
      outstanding -= 1;
      if (outstanding === 0) drained?.();
    });
  };

  const tick = (): void => {
    timer = undefined;
    if (!running) return;
    const now = performance.now();
    while (nextIntended <= now) {
      const intended = nextIntended;
      nextIntended += options.nextGapMs();
      if (outstanding >= options.maxOutstanding) recorder.dropped();
      else send(intended);
    }
    timer = setTimeout(tick, Math.max(0, nextIntended - performance.now()));
  };
  tick();

  return {
    measure: (ms, hooks) => recorder.measure(ms, hooks),
    firstError: () => recorder.firstError(),
    outstanding: () => outstanding,
    async stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      if (outstanding > 0) await new Promise<void>((resolve) => (drained = resolve));
    },
  };
}
