/**
 * Length buckets: a decode step runs once per bucket of sequences grouped by cached length, each bucket
 * with its own KV cache padded only to its own longest sequence. One padded batch pays every row at the
 * longest sequence's length (about twice the mean with mixed lengths), and on a small model the
 * per-position work (the model's past-to-present Concat, attention) dominates a step; there a few more
 * runs per step cost less than that padding (on a weight-bound model they do not: see the default). A sequence that outgrows its bucket moves to the next one once
 * (its cache row copied, counted as `bucketFloats`).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

/**
 * The default: one padded run per step. Each run reads every weight once, so on a model whose weights do
 * not stay in cache (every real LLM; bench_decoder measured 16% more engine CPU per token with buckets)
 * more runs cost more than padding; a cache-resident model (tiny_decoder) sets its own buckets
 * (docs/benchmarks.md, issue 21 second pass).
 */
export const DEFAULT_LENGTH_BUCKETS = 'none';

/** Most buckets: every bucket is one more run per step. */
const MAX_BUCKETS = 16;

/**
 * Parses `length_buckets`: ascending cached-length bounds, each bucket holding the sequences shorter
 * than its bound; bounds at or beyond the context are dropped (the last bucket always reaches the
 * context). `none` = a single bucket.
 */
export function parseLengthBuckets(model: string, text: string, contextLength: number): number[] {
  if (text.trim().toLowerCase() === 'none') return [];
  const parts = text.split(',').map((p) => p.trim());
  const bounds: number[] = [];
  for (const part of parts) {
    const value = Number(part);
    if (part === '' || !Number.isSafeInteger(value) || value < 2) {
      throw TesseraError.invalidArg(`model '${model}': parameter 'length_buckets' must be 'none' or ascending integers >= 2 separated by commas, got '${text}'`);
    }
    if (bounds.length > 0 && value <= (bounds[bounds.length - 1] as number)) {
      throw TesseraError.invalidArg(`model '${model}': parameter 'length_buckets' must be ascending, got '${text}'`);
    }
    bounds.push(value);
  }
  if (bounds.length > MAX_BUCKETS) {
    throw TesseraError.invalidArg(`model '${model}': parameter 'length_buckets' allows at most ${MAX_BUCKETS} bounds, got ${bounds.length}`);
  }
  return bounds.filter((b) => b < contextLength);
}

/** Every bucket's bound (exclusive), the last being the context. */
export function bucketLimits(bounds: readonly number[], contextLength: number): number[] {
  return [...bounds.filter((b) => b < contextLength), contextLength];
}

/** The index of the bucket a sequence of `length` cached positions steps in (it needs length + 1 positions). */
export function bucketIndexOf(limits: readonly number[], length: number): number {
  for (let i = 0; i < limits.length; i++) if (length < (limits[i] as number)) return i;
  return limits.length - 1;
}
