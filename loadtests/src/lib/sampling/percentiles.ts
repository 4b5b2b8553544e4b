/**
 * Latency summaries. Percentiles use the nearest-rank method (the smallest sample with at least p% of
 * samples at or below it), as perf_analyzer does, so a reported p99 is always a latency some request
 * actually had rather than an interpolation between two.
 */

export interface LatencySummary {
  readonly count: number;
  readonly minUs: number;
  readonly avgUs: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p95Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
}

/** Nearest-rank percentile of ascending `sorted`; NaN for no samples. `p` in [0, 100]. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within [0, 100], got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** Summarizes latencies in microseconds (the input is not modified). */
export function summarizeLatencies(samplesUs: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samplesUs).sort();
  const values = Array.from(sorted);
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    minUs: values.length > 0 ? (values[0] as number) : Number.NaN,
    avgUs: values.length > 0 ? sum / values.length : Number.NaN,
    p50Us: percentile(values, 50),
    p90Us: percentile(values, 90),
    p95Us: percentile(values, 95),
    p99Us: percentile(values, 99),
    maxUs: values.length > 0 ? (values[values.length - 1] as number) : Number.NaN,
  };
}

/** The middle value (the mean of the two middle ones for an even count); NaN for no values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
