/**
 * Percentile-bootstrap intervals for the ratios the benches report (a p99 against a p99, a rate against a
 * rate): each side's samples are drawn again with replacement, within each of its windows (strata), so the
 * interval says how much the figure would move with other probes from the same windows. It does not cover
 * what a window cannot show (a different box load); the per-window values beside it do.
 */
import { mulberry32 } from '../../../../gpu-node/src/example-models/prng.js';
import { percentile } from './percentiles.js';

export interface Interval {
  /** The statistic on the samples as measured. */
  readonly value: number;
  readonly low: number;
  readonly high: number;
  /** Central share the interval covers (0.9: the 5th to the 95th percentile of the resampled statistic). */
  readonly level: number;
  readonly reps: number;
}

export interface BootstrapOptions {
  readonly reps?: number;
  readonly level?: number;
  readonly seed?: number;
}

/**
 * `sides[s][w]` holds side s's samples of window w; `statistic` gets each side's samples pooled over its
 * windows. NaN bounds when a side has no samples.
 */
export function bootstrapInterval<T>(sides: readonly (readonly (readonly T[])[])[], statistic: (pooled: readonly T[][]) => number, options: BootstrapOptions = {}): Interval {
  const reps = options.reps ?? 2000;
  const level = options.level ?? 0.9;
  if (!(level > 0 && level < 1)) throw new RangeError(`level must be within (0, 1), got ${level}`);
  if (!Number.isSafeInteger(reps) || reps < 1) throw new RangeError(`reps must be a positive integer, got ${reps}`);
  const value = statistic(sides.map((windows) => windows.flat() as T[]));
  if (sides.some((windows) => windows.every((w) => w.length === 0))) return { value, low: Number.NaN, high: Number.NaN, level, reps };
  const random = mulberry32(options.seed ?? 1);
  const drawn: number[] = [];
  for (let r = 0; r < reps; r++) {
    const pooled = sides.map((windows) => {
      const out: T[] = [];
      for (const w of windows) for (let i = 0; i < w.length; i++) out.push(w[Math.floor(random() * w.length)] as T);
      return out;
    });
    drawn.push(statistic(pooled));
  }
  const sorted = drawn.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const tail = ((1 - level) / 2) * 100;
  return { value, low: percentile(sorted, tail), high: percentile(sorted, 100 - tail), level, reps };
}

/** p99 of the first side over p99 of the second (nearest rank, as the benches' p99). */
export function p99Ratio(pooled: readonly number[][]): number {
  const [a = [], b = []] = pooled;
  const p99 = (values: number[]) => percentile([...values].sort((x, y) => x - y), 99);
  return p99(a) / p99(b);
}

/** A piece of a throughput measurement: tokens seen over seconds (a second of a window, or one whole batch). */
export interface RateUnit {
  readonly tokens: number;
  readonly seconds: number;
}

/** Tokens per second of the first side over the second's, each as its tokens summed over its seconds summed. */
export function rateRatio(pooled: readonly RateUnit[][]): number {
  const [a = [], b = []] = pooled;
  const rate = (units: RateUnit[]) => units.reduce((s, u) => s + u.tokens, 0) / units.reduce((s, u) => s + u.seconds, 0);
  return rate(a) / rate(b);
}
