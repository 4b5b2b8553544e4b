/**
 * When an open-loop load sends its requests: the gaps between intended send times, for a target rate.
 * `constant` spaces them evenly (perf_analyzer's default); `poisson` draws exponential gaps, the
 * inter-arrival times of a Poisson process, so requests bunch up and thin out as independent users' do.
 *
 * The generator is seeded (a run is repeatable, and the test checks a statistical property of a fixed
 * sequence rather than of whatever Math.random gives), with mulberry32: 32-bit state, fast, and
 * uniform enough for arrival times, which is all it is used for.
 */

import { mulberry32 } from '../../../../shared/src/random/mulberry32.js';

export type RequestDistribution = 'constant' | 'poisson';

export { mulberry32 };

/** A function giving the next gap in milliseconds; the gaps' mean is 1000 / ratePerSec. */
export function arrivalGaps(distribution: RequestDistribution, ratePerSec: number, seed = 1): () => number {
  if (!(ratePerSec > 0) || !Number.isFinite(ratePerSec)) throw new RangeError(`request rate must be positive, got ${ratePerSec}`);
  const meanMs = 1000 / ratePerSec;
  if (distribution === 'constant') return () => meanMs;
  const uniform = mulberry32(seed);
  // Inverse transform: -ln(U) is exponential with mean 1; 1 - U is in (0, 1], so the log is finite.
  return () => -Math.log(1 - uniform()) * meanMs;
}
