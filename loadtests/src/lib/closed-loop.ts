/**
 * Closed-loop load: N callers, each sending its next request as soon as the previous one answers, so the
 * number of requests in flight is exactly N (perf_analyzer's `--concurrency-range`).
 *
 * A warm-up period (connections opening, JIT, the server's arenas growing) is discarded, then a
 * measurement window counts every request that *completes* inside it: throughput is completions / window
 * and the latency samples are those requests' own latencies. Requests still in flight when the window
 * closes are awaited (so the next run starts on a quiet server) but not counted. The window's edges are
 * reported to `onWindowStart` / `onWindowEnd` so server statistics can be read at the same moments.
 */
import { summarizeLatencies, type LatencySummary } from './percentiles.js';

/** What one call may report besides its latency: client-side encode/decode time, in microseconds. */
export interface CallTiming {
  readonly sendUs: number;
  readonly recvUs: number;
}

export interface ClosedLoopOptions {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly measureMs: number;
  /** One request; its promise settles when the response has been received and decoded. */
  readonly call: () => Promise<CallTiming | void>;
  readonly onWindowStart?: () => Promise<void>;
  readonly onWindowEnd?: () => Promise<void>;
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

const nowMs = (): number => performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  let phase: 'warmup' | 'measure' | 'done' = 'warmup';
  let windowStart = 0;
  let windowEnd = 0;
  const latenciesUs: number[] = [];
  let sendUs = 0;
  let recvUs = 0;
  let errors = 0;
  let firstError: string | undefined;

  const caller = async (): Promise<void> => {
    while (phase !== 'done') {
      const start = nowMs();
      try {
        const timing = await options.call();
        const end = nowMs();
        if (phase === 'measure') {
          latenciesUs.push((end - start) * 1000);
          if (timing) {
            sendUs += timing.sendUs;
            recvUs += timing.recvUs;
          }
        }
      } catch (error) {
        if (phase === 'measure') errors += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
        // A refused connection fails at once; back off so a dead server does not spin the loop.
        await sleep(10);
      }
    }
  };

  const callers = Array.from({ length: options.concurrency }, caller);
  await sleep(options.warmupMs);
  await options.onWindowStart?.();
  windowStart = nowMs();
  phase = 'measure';
  await sleep(options.measureMs);
  phase = 'done';
  windowEnd = nowMs();
  await options.onWindowEnd?.();
  await Promise.all(callers);

  const windowS = (windowEnd - windowStart) / 1000;
  const completed = latenciesUs.length;
  return {
    concurrency: options.concurrency,
    completed,
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
    windowS,
    requestsPerSec: completed / windowS,
    latency: summarizeLatencies(latenciesUs),
    clientSendUs: completed > 0 ? sendUs / completed : 0,
    clientRecvUs: completed > 0 ? recvUs / completed : 0,
  };
}
