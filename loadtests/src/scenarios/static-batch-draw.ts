/**
 * The output lengths of the whole-request baseline's batches, drawn in mirrored pairs: a batch's 32 lengths
 * are drawn from 8..256 uniformly as before, and the next batch takes each row's mirror (8 + 256 - length).
 * Each batch alone is an exact draw of the baseline (32 requests, lengths uniform from 8 to 256), so
 * what a batch costs is unchanged; a pair's useful tokens are always 2 × 32 × 132, so a round's rate no
 * longer moves by ~10% with which lengths it happened to draw (antithetic variates).
 */
import { MAX_TOKENS, MIN_TOKENS, outputLength } from './llm-stream-client.js';

/** A batch's lengths and its mirror's; `size` draws of `random`. */
export function mirroredBatchLengths(random: () => number, size: number): [number[], number[]] {
  const lengths = Array.from({ length: size }, () => outputLength(random));
  return [lengths, lengths.map((length) => MIN_TOKENS + MAX_TOKENS - length)];
}

/**
 * Lengths for `batches` whole batches (an even count: whole pairs only), in the order they run. A round
 * measured over these is one over whole pairs, so its useful tokens are exactly their expected count.
 */
export function pairedBatchLengths(random: () => number, size: number, batches: number): number[][] {
  if (!Number.isSafeInteger(batches) || batches < 2 || batches % 2 !== 0) throw new RangeError(`batches must be an even whole number ≥ 2, got ${batches}`);
  const out: number[][] = [];
  for (let pair = 0; pair < batches / 2; pair++) out.push(...mirroredBatchLengths(random, size));
  return out;
}
