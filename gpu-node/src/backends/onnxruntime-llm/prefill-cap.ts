/**
 * How many padded prompt tokens one prefill run may take (config parameters `max_num_batched_tokens` and
 * `busy_prefill_tokens`). A run is never interrupted, so whatever else the engine holds waits for all of it:
 * running sequences for their next token, and a request arriving meanwhile for its prefill (the engine reads
 * it only once the run ends). When the run is the only work (nothing decoding, nothing else waiting) a large
 * run costs no one anything and saves per-run overhead, so `max_num_batched_tokens` applies; otherwise the
 * smaller `busy_prefill_tokens` bounds what the others wait for. A wave of arrivals is cut into smaller runs
 * this way from its first run on (others of the wave wait behind it), and a lone long prompt on an idle engine
 * is not chunked.
 */

/**
 * 128 padded tokens: ~30 ms of bench_decoder prefill on a CPU core (~245 µs per prompt token), under a
 * decode step over 31 sequences; each extra run costs one read of the weights (~2-2.5 ms there), paid only
 * by waves and long prompts on a busy engine (docs/benchmarks.md, fifth pass).
 */
export const DEFAULT_BUSY_PREFILL_TOKENS = 128;

/** The cap of the next prefill run; `busy`: sequences are decoding or other requests would wait behind it. */
export function prefillRunCap(maxBatchedTokens: number, busyPrefillTokens: number | undefined, busy: boolean): number {
  return busy && busyPrefillTokens !== undefined ? Math.min(maxBatchedTokens, busyPrefillTokens) : maxBatchedTokens;
}
