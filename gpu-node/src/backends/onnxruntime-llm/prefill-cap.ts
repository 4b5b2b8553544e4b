/**
 * How many padded prompt tokens one prefill run may take (config parameters `max_num_batched_tokens` and
 * `busy_prefill_tokens`). A run is never interrupted, so whatever else the engine holds waits for all of it:
 * running sequences for their next token, and a request arriving meanwhile for its prefill (the engine reads
 * it only once the run ends). When the run is the only work (nothing decoding, nothing else waiting) a large
 * run costs no one anything and saves per-run overhead, so `max_num_batched_tokens` applies; otherwise the
 * smaller `busy_prefill_tokens` bounds what the others wait for. A wave of arrivals is cut into smaller runs
 * this way from its first run on (others of the wave wait behind it), and a lone long prompt on an idle engine
 * is not chunked. `busy_prefill_group_tokens` bounds a busy run of several prompts further: a prompt up to
 * `busy_prefill_tokens` still runs whole (a probe's prompt is not chunked), but a wave is not grouped past it.
 */

/**
 * 128 padded tokens: ~30 ms of bench_decoder prefill on a CPU core (~245 µs per prompt token), under a
 * decode step over 31 sequences; each extra run costs one read of the weights (~2-2.5 ms there), paid only
 * by waves and long prompts on a busy engine (docs/benchmarks.md, fifth pass).
 */
export const DEFAULT_BUSY_PREFILL_TOKENS = 128;

/**
 * 64 padded tokens: on a busy engine a prefill run holds a second prompt only within this, so a wave's runs are
 * one typical prompt each (bench prompts: 15-80 tokens) instead of groups of up to 128 tokens. A request that
 * lands during a wave waits for the run in flight; at 128 tokens that run is ~30 ms of bench_decoder prefill, twice
 * a 16-row decode run, and those probes set the wave's TTFT p99 (docs/benchmarks.md, ninth pass). Each extra run
 * costs one read of the weights (~2.4 ms there), paid once per prompt of a wave.
 */
export const DEFAULT_BUSY_PREFILL_GROUP_TOKENS = 64;

/** The cap of the next prefill run; `busy`: sequences are decoding or other requests would wait behind it. */
export function prefillRunCap(maxBatchedTokens: number, busyPrefillTokens: number | undefined, busy: boolean): number {
  return busy && busyPrefillTokens !== undefined ? Math.min(maxBatchedTokens, busyPrefillTokens) : maxBatchedTokens;
}

/** The most padded tokens of a run of two or more prompts: `runCap`, and within `busyGroupTokens` when busy. */
export function prefillGroupCap(runCap: number, busyGroupTokens: number | undefined, busy: boolean): number {
  return busy && busyGroupTokens !== undefined ? Math.min(runCap, busyGroupTokens) : runCap;
}
