/**
 * Closed-loop load: N callers, each sending its next request as soon as the previous one answers, so the
 * number of requests in flight is exactly N (perf_analyzer's `--concurrency-range`).
 *
 * `startClosedLoad` keeps the callers running until stopped and is measured in windows (see
 * load-window.ts); `runClosedLoop` is the one-window form: a warm-up period (connections opening, JIT,
 * the server's arenas growing) is discarded, then one window counts every request that *completes*
 * inside it. Requests still in flight when the window closes are awaited (so the next run starts on a
 * quiet server) but not counted. The window's edges are reported to `onWindowStart` / `onWindowEnd` so
 * server statistics can be read at the same moments.
 *
 * A closed loop measures latency from the moment each request is actually sent; when the server stalls,
 * the callers stall with it and send less (coordinated omission). The open loop (open-loop.ts) does not.
 */
import { WindowRecorder, sleep, type CallTiming, type RunningLoad, type WindowHooks } from './load-window.js';
import { summarizeLatencies, type LatencySummary } from '../sampling/percentiles.js';

export type { CallTiming } from './load-window.js';

export interface ClosedLoadOptions {
  readonly concurrency: number;
  /** One request; `seq` numbers the requests. Settles when the response has been received and decoded. */
  readonly call: (seq: number) => Promise<CallTiming | void>;
  /** How many tags requests cycle through (seq % tags); default 1. */
  readonly tags?: number;
}

export function startClosedLoad(options: ClosedLoadOptions): RunningLoad {
  const recorder = new WindowRecorder(options.tags ?? 1);
  let running = true;
  let seq = 0;
  const caller = async (): Promise<void> => {
    while (running) {
      const mine = seq++;
      const start = performance.now();
      try {
        const timing = await options.call(mine);
        recorder.success((performance.now() - start) * 1000, mine, timing);
      } catch (error) {
        recorder.failure(error, mine);
        // A refused connection fails at once; back off so a dead server does not spin the loop.
        await sleep(10);
      }
    }
  };
  const callers = Array.from({ length: options.concurrency }, caller);
  return {
    measure: (ms, hooks) => recorder.measure(ms, hooks),
    firstError: () => recorder.firstError(),
    async stop() {
      running = false;
      await Promise.all(callers);
    },
  };
}

export interface ClosedLoopOptions extends WindowHooks {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly measureMs: number;
  /** One request; its promise settles when the response has been received and decoded. */
  readonly call: () => Promise<CallTiming | void>;
}

export interface ClosedLoopResult {
  readonly concurrency: number;
  readonly completed: number;
  readonly errors: number;
  readonly firstError?: string;
  /** The window as it actually ran (timers fire late on a busy event loop). */
  readonly windowS: number;
  readonly requestsPerSec: number;
  readonly latency: LatencySummary;
  /** Averages over the counted requests; 0 when the call reports no timing. */
  readonly clientSendUs: number;
  readonly clientRecvUs: number;
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const load = startClosedLoad({ concurrency: options.concurrency, call: () => options.call() });
  let window;
  try {
    await sleep(options.warmupMs);
    window = await load.measure(options.measureMs, options);
  } finally {
    await load.stop();
  }
  const completed = window.latenciesUs.length;
  const firstError = load.firstError();
  return {
    concurrency: options.concurrency,
    completed,
    errors: window.errors,
    ...(firstError !== undefined ? { firstError } : {}),
    windowS: window.windowS,
    requestsPerSec: completed / window.windowS,
    latency: summarizeLatencies(window.latenciesUs),
    clientSendUs: completed > 0 ? window.sendUsTotal / completed : 0,
    clientRecvUs: completed > 0 ? window.recvUsTotal / completed : 0,
  };
}

/**
 * Exactly `count` requests from `concurrency` closed-loop callers, none timed: for benches that measure
 * a process over a fixed amount of work (turns of N inferences) rather than over a window. A failed call
 * rejects the whole run.
 */
export async function sendClosedLoop(count: number, concurrency: number, call: () => Promise<unknown>): Promise<void> {
  let left = count;
  const caller = async (): Promise<void> => {
    while (left > 0) {
      left -= 1;
      await call();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}
