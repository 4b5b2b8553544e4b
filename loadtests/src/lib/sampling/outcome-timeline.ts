/**
 * What happened to each request over time, for the fault scenarios (a node killed, Redis stopped) and
 * the soak: every request's send time and whether it succeeded, then
 *
 * - `bucketTimeline`: fixed buckets (successes/s, failures/s, p99) for plots and per-phase figures;
 * - `recoveryAfter`: how long after an event the success rate was back at or above a threshold for
 *   good. Sliding windows of `windowMs` start every `stepMs` from the event on; the recovery time is
 *   the start of the first window from which every later window passes, minus the event time. A
 *   window with no completions at all fails (a stall is not a success). 0 when no window failed;
 *   undefined when the last one failed (not recovered within what was observed).
 *
 * Outcomes are placed at their SEND time, not their completion: "requests sent at t succeeded at X%"
 * is what a client sees of a fault, and a request that hangs until its deadline before failing is
 * charged to when it was sent, not seconds later. Times are milliseconds since the load started.
 * Pure, so the arithmetic is unit-tested.
 */
import { percentile } from './percentiles.js';

export interface Outcome {
  /** Send time, ms since the load started. */
  readonly tMs: number;
  readonly ok: boolean;
  /** Send → answer, ms. */
  readonly latencyMs: number;
  /** A short label of the failure (an error code or the start of its message); failures only. */
  readonly error?: string;
}

export interface Bucket {
  readonly startMs: number;
  readonly ok: number;
  readonly failed: number;
  readonly okPerSec: number;
  readonly failedPerSec: number;
  /** p99 of the successes in the bucket, ms; NaN when none. */
  readonly p99Ms: number;
}

export function bucketTimeline(outcomes: readonly Outcome[], bucketMs: number, endMs: number): Bucket[] {
  if (!(bucketMs > 0)) throw new RangeError(`bucket must be positive, got ${bucketMs}`);
  const count = Math.max(0, Math.ceil(endMs / bucketMs));
  const latencies: number[][] = Array.from({ length: count }, () => []);
  const failed = new Array<number>(count).fill(0);
  for (const o of outcomes) {
    const i = Math.floor(o.tMs / bucketMs);
    if (i < 0 || i >= count) continue;
    if (o.ok) (latencies[i] as number[]).push(o.latencyMs);
    else failed[i] = (failed[i] ?? 0) + 1;
  }
  return latencies.map((l, i) => {
    const sorted = l.sort((a, b) => a - b);
    const f = failed[i] ?? 0;
    return {
      startMs: i * bucketMs,
      ok: sorted.length,
      failed: f,
      okPerSec: (sorted.length * 1000) / bucketMs,
      failedPerSec: (f * 1000) / bucketMs,
      p99Ms: percentile(sorted, 99),
    };
  });
}

export interface RecoveryOptions {
  /** Sliding window length; default 1000 ms. */
  readonly windowMs?: number;
  /** Distance between window starts; default 100 ms. */
  readonly stepMs?: number;
  /** Success share a window needs; default 0.99. */
  readonly threshold?: number;
  /** End of the observation (windows must fit before it), ms since the load started. */
  readonly endMs: number;
}

export interface Recovery {
  /** ms after the event; undefined when not recovered before `endMs`. */
  readonly recoveryMs: number | undefined;
  /** Failures sent at or after the event. */
  readonly failuresAfter: number;
  /** Lowest success share of any window from the event on; NaN when no window fits. */
  readonly worstRate: number;
}

export function recoveryAfter(outcomes: readonly Outcome[], eventMs: number, options: RecoveryOptions): Recovery {
  const windowMs = options.windowMs ?? 1000;
  const stepMs = options.stepMs ?? 100;
  const threshold = options.threshold ?? 0.99;
  const after = outcomes.filter((o) => o.tMs >= eventMs).sort((a, b) => a.tMs - b.tMs);
  const failuresAfter = after.filter((o) => !o.ok).length;
  let lastFailing = -1;
  let windows = 0;
  let worstRate = Number.NaN;
  // Two pointers over the sorted outcomes: [lo, hi) is the window's content.
  let lo = 0;
  let hi = 0;
  let ok = 0;
  let total = 0;
  for (let start = eventMs; start + windowMs <= options.endMs; start += stepMs, windows++) {
    while (hi < after.length && (after[hi] as Outcome).tMs < start + windowMs) {
      total += 1;
      if ((after[hi] as Outcome).ok) ok += 1;
      hi += 1;
    }
    while (lo < hi && (after[lo] as Outcome).tMs < start) {
      total -= 1;
      if ((after[lo] as Outcome).ok) ok -= 1;
      lo += 1;
    }
    const rate = total > 0 ? ok / total : 0;
    if (!(rate >= worstRate)) worstRate = rate;
    if (rate < threshold) lastFailing = windows;
  }
  let recoveryMs: number | undefined;
  if (windows === 0) recoveryMs = undefined;
  else if (lastFailing === windows - 1) recoveryMs = undefined;
  else recoveryMs = (lastFailing + 1) * stepMs;
  return { recoveryMs, failuresAfter, worstRate };
}

/** Failures by label, most frequent first. */
export function failureKinds(outcomes: readonly Outcome[]): Array<{ error: string; count: number }> {
  const counts = new Map<string, number>();
  for (const o of outcomes) if (!o.ok) counts.set(o.error ?? 'unknown', (counts.get(o.error ?? 'unknown') ?? 0) + 1);
  return [...counts].map(([error, count]) => ({ error, count })).sort((a, b) => b.count - a.count);
}

/** Successes and failures sent in [fromMs, toMs). */
export function phaseCounts(outcomes: readonly Outcome[], fromMs: number, toMs: number): { ok: number; failed: number; errorRate: number; p99Ms: number } {
  const inside = outcomes.filter((o) => o.tMs >= fromMs && o.tMs < toMs);
  const okLatencies = inside.filter((o) => o.ok).map((o) => o.latencyMs).sort((a, b) => a - b);
  const failed = inside.length - okLatencies.length;
  return { ok: okLatencies.length, failed, errorRate: inside.length > 0 ? failed / inside.length : Number.NaN, p99Ms: percentile(okLatencies, 99) };
}
