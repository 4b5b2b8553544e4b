/**
 * perf_analyzer's stability rule: a load point is measured in consecutive windows until the last three
 * agree, i.e. both their throughputs and their latencies satisfy max / min <= 1 + threshold (and none
 * had zero throughput). Only then are those three windows merged into the reported point; a point that
 * never settles within `--max-trials` windows is reported from its last three, marked unstable.
 *
 * The latency compared is the average (perf_analyzer's default when no --percentile is given).
 */

export interface WindowFigures {
  readonly inferencesPerSec: number;
  readonly latencyUs: number;
}

export const STABILITY_WINDOWS = 3;

const withinRatio = (values: readonly number[], threshold: number): boolean =>
  Math.max(...values) / Math.min(...values) <= 1 + threshold;

/** Whether the last `count` windows are stable; `thresholdPct` is --stability-percentage (10 = 10%). */
export function isStable(windows: readonly WindowFigures[], thresholdPct: number, count = STABILITY_WINDOWS): boolean {
  if (windows.length < count) return false;
  const last = windows.slice(-count);
  if (last.some((w) => !(w.inferencesPerSec > 0) || !(w.latencyUs > 0))) return false;
  const threshold = thresholdPct / 100;
  return (
    withinRatio(
      last.map((w) => w.inferencesPerSec),
      threshold,
    ) &&
    withinRatio(
      last.map((w) => w.latencyUs),
      threshold,
    )
  );
}
