/**
 * An open-loop load of fixed length during which things happen at set times (a node is killed, Redis
 * stops and comes back), recording every request's outcome on a timeline (outcome-timeline.ts).
 *
 * Two views of the same requests: the open loop's own window (latency from each request's *intended*
 * send time, dropped sends counted, so coordinated omission does not hide a stall) for the totals, and
 * the timeline (send time, success, send → answer) for what happened when. Actions run in order,
 * each awaited, starting no earlier than its `atMs`; their actual start and end times are reported.
 */
import { arrivalGaps, type RequestDistribution } from './arrival-gaps.js';
import { mergeWindows, sleep, type LoadWindow } from './load-window.js';
import { startOpenLoad } from './open-loop.js';
import type { Outcome } from '../sampling/outcome-timeline.js';

export interface TimedAction {
  readonly name: string;
  /** ms after the load started. */
  readonly atMs: number;
  readonly run: () => Promise<void>;
}

export interface TimedLoadOptions {
  readonly ratePerSec: number;
  readonly durationMs: number;
  /** One request; rejects on failure. */
  readonly call: (seq: number) => Promise<unknown>;
  readonly actions?: readonly TimedAction[];
  /** Cap on outstanding requests; default 1024. */
  readonly maxOutstanding?: number;
  /** Default 'poisson' (seeded, repeatable). */
  readonly distribution?: RequestDistribution;
  /** Seed of the arrival gaps; default 1. */
  readonly seed?: number;
  /**
   * The load goes on at least this long after the last action ended, even past `durationMs` (an
   * action that takes longer than planned, e.g. a restart on a busy machine, must not eat the phase
   * after it); default 0.
   */
  readonly tailMs?: number;
}

export interface ActionTiming {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly error?: string;
}

export interface TimedLoadResult {
  readonly outcomes: readonly Outcome[];
  readonly window: LoadWindow;
  readonly actions: readonly ActionTiming[];
  /** How long the load ran, ms: `durationMs`, or longer to give the last action its tail. */
  readonly endMs: number;
  readonly firstError?: string;
}

/** A short label for a failed request: its error code when it has one, and the start of its message. */
export function errorLabel(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
  const short = message.length > 70 ? `${message.slice(0, 70)}…` : message;
  return typeof code === 'string' && code !== '' ? `${code}: ${short}` : short;
}

export async function runTimedLoad(options: TimedLoadOptions): Promise<TimedLoadResult> {
  const outcomes: Outcome[] = [];
  const t0 = performance.now();
  const since = (): number => performance.now() - t0;
  const load = startOpenLoad({
    nextGapMs: arrivalGaps(options.distribution ?? 'poisson', options.ratePerSec, options.seed ?? 1),
    maxOutstanding: options.maxOutstanding ?? 1024,
    call: async (seq) => {
      const sent = performance.now();
      const tMs = sent - t0;
      try {
        await options.call(seq);
        outcomes.push({ tMs, ok: true, latencyMs: performance.now() - sent });
      } catch (error) {
        outcomes.push({ tMs, ok: false, latencyMs: performance.now() - sent, error: errorLabel(error) });
        throw error;
      }
    },
  });
  const timings: ActionTiming[] = [];
  const runActions = async (): Promise<void> => {
    for (const action of [...(options.actions ?? [])].sort((a, b) => a.atMs - b.atMs)) {
      const wait = action.atMs - since();
      if (wait > 0) await sleep(wait);
      const startMs = since();
      try {
        await action.run();
        timings.push({ name: action.name, startMs, endMs: since() });
      } catch (error) {
        timings.push({ name: action.name, startMs, endMs: since(), error: errorLabel(error) });
      }
    }
  };
  let window: LoadWindow;
  let endMs: number;
  try {
    [window] = await Promise.all([load.measure(options.durationMs), runActions()]);
    const lastEnd = Math.max(0, ...timings.map((t) => t.endMs));
    const extraMs = lastEnd + (options.tailMs ?? 0) - since();
    if (timings.length > 0 && extraMs > 0) window = mergeWindows([window, await load.measure(extraMs)]);
    endMs = since();
  } finally {
    await load.stop();
  }
  const firstError = load.firstError();
  return { outcomes, window, actions: timings, endMs, ...(firstError !== undefined ? { firstError } : {}) };
}
