/**
 * The onnxruntime_llm backend's settings, from config.pbtxt `parameters` (all optional):
 * - `max_num_seqs` (default 32): sequences decoded together in one step;
 * - `kv_cache_bytes` (default 64 MiB): the KV budget; each admitted sequence holds (prompt + max_tokens) ×
 *   bytes per token of it until it leaves;
 * - `context_length` (default 512): most prompt + generated tokens of one sequence;
 * - `admission`: `wait` (default: a request the budget cannot take yet waits) or `reject` (UNAVAILABLE at once);
 * - `max_queue_size` (default 0 = no limit): most requests waiting for admission;
 * - `tokenizer_file` (default `tokenizer.json`), looked for in the version folder, then the model's folder;
 *   `tokenizer_config.json` beside it is read when present (its `eos_token`);
 * - `eos_token`: the end-of-sequence token's text when tokenizer_config.json does not say;
 * - `intra_op_thread_count` (default 1): onnxruntime threads per step;
 * - `num_heads`, `head_dim`: only for models whose KV inputs leave them symbolic;
 * - `length_buckets` (default `none`: one padded run over every sequence): cached-length bounds splitting
 *   a decode step into one run per bucket (length-bucket.ts), for models whose weights stay in cache;
 * - `max_num_batched_tokens` (default 512): most padded prompt tokens (rows × longest prompt)
 *   one prefill run takes; the waiting requests are prefilled in groups within it, a longer prompt alone in chunks;
 * - `prefill_order` (default `shortest_first`) and `prefill_aging_ms` (default 1000): the order of waiting prefills
 *   within a priority level (prefill-order.ts);
 * - `decode_run_rows` (default DEFAULT_DECODE_RUN_ROWS): most rows of one decode run; a step is cut into runs of
 *   at most this many rows with newcomers prefilled between them (decode-split.ts); 0 = one run per bucket; with one
 *   bucket, each run holds rows of similar length (length-lanes.ts);
 * - `busy_prefill_tokens` (default DEFAULT_BUSY_PREFILL_TOKENS): the prefill run cap while other work would wait
 *   for the run (prefill-cap.ts); `max_num_batched_tokens` applies when the run is the only work;
 * - `busy_prefill_group_tokens` (default DEFAULT_BUSY_PREFILL_GROUP_TOKENS): on a busy engine, most padded tokens of
 *   a run of two or more prompts (prefill-cap.ts);
 * - `first_token_handoff_us` (default DEFAULT_FIRST_TOKEN_HANDOFF_US, 0 = off): after posting first tokens the engine
 *   thread sleeps until the main thread has handled them, at most this long (first-token-handoff.ts; at most 1 s).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { ModelSource } from '../backend.js';
import { DEFAULT_LENGTH_BUCKETS, parseLengthBuckets } from './length-bucket.js';
import { DEFAULT_PREFILL_AGING_MS, parsePrefillOrder, type PrefillOrder } from './prefill-order.js';
import { parseDecodeRunRows } from './decode-split.js';
import { DEFAULT_BUSY_PREFILL_GROUP_TOKENS, DEFAULT_BUSY_PREFILL_TOKENS } from './prefill-cap.js';

export interface LlmSettings {
  readonly maxNumSeqs: number;
  readonly kvCacheBytes: number;
  readonly contextLength: number;
  readonly admission: 'wait' | 'reject';
  readonly maxQueueSize: number;
  readonly tokenizerFile: string;
  readonly eosToken: string | undefined;
  readonly intraOpThreads: number;
  readonly heads: number | undefined;
  readonly headDim: number | undefined;
  /** Upper bounds (exclusive) of cached length per bucket, ascending, below the context; [] = one bucket. */
  readonly lengthBuckets: readonly number[];
  /** Most padded prompt tokens of one prefill run. */
  readonly maxBatchedTokens: number;
  readonly prefillOrder: PrefillOrder;
  readonly prefillAgingMs: number;
  /** Most rows of one decode run (0 = a whole bucket per run). */
  readonly decodeRunRows: number;
  readonly busyPrefillTokens: number;
  readonly busyPrefillGroupTokens: number;
  /** Most µs the engine waits for the main thread to handle a message with first tokens (0 = it does not wait). */
  readonly firstTokenHandoffUs: number;
}

export const DEFAULT_MAX_NUM_SEQS = 32;
export const DEFAULT_KV_CACHE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CONTEXT_LENGTH = 512;
/**
 * 512, not vLLM's 2048: prefill on a CPU core is compute-bound (a group costs about the sum of its
 * members), and every member's first token waits for its whole run; 512 padded tokens still amortize a
 * run's fixed cost over about ten typical prompts (docs/benchmarks.md, issue 21 third pass).
 */
export const DEFAULT_MAX_BATCHED_TOKENS = 512;
/**
 * 16: a step over 32 sequences in two runs, so a newcomer waits for about half a step. On bench_decoder
 * (weight-bound, as real LLMs are) an extra run costs one read of the weights, ~2-2.5 ms against a ~30 ms step;
 * the decode run in flight was the largest part of a busy probe's TTFT once prefill runs were capped
 * (docs/benchmarks.md, fifth pass). Cache-resident models whose runs take ~1 ms gain nothing (tiny_decoder sets 0).
 */
export const DEFAULT_DECODE_RUN_ROWS = 16;

/**
 * 2 ms: the main thread takes a first token's message in ~0.1-0.3 ms when it has the core; the cap bounds what a
 * main thread itself kept off the core (by other processes) costs the engine, about one decode run of tiny_decoder.
 */
export const DEFAULT_FIRST_TOKEN_HANDOFF_US = 2000;
/** A hand-off longer than this would stall the engine behind a stuck main thread for no gain. */
const MAX_FIRST_TOKEN_HANDOFF_US = 1_000_000;

export function llmSettingsOf(source: ModelSource): LlmSettings {
  const text = (key: string): string | undefined => {
    const value = source.config.parameters[key]?.stringValue?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (key: string, fallback: number, min: number): number => {
    const value = text(key);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw TesseraError.invalidArg(`model '${source.name}': parameter '${key}' must be an integer >= ${min}, got '${value}'`);
    }
    return parsed;
  };
  const admission = text('admission') ?? 'wait';
  if (admission !== 'wait' && admission !== 'reject') {
    throw TesseraError.invalidArg(`model '${source.name}': parameter 'admission' must be 'wait' or 'reject', got '${admission}'`);
  }
  const tokenizerFile = text('tokenizer_file') ?? 'tokenizer.json';
  // A plain file name: the tokenizer is the model's own, never a path out of its folder.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(tokenizerFile)) {
    throw TesseraError.invalidArg(`model '${source.name}': parameter 'tokenizer_file' must be a file name in the model's folder, got '${tokenizerFile}'`);
  }
  const heads = text('num_heads') === undefined ? undefined : integer('num_heads', 0, 1);
  const headDim = text('head_dim') === undefined ? undefined : integer('head_dim', 0, 1);
  if (source.config.modelTransactionPolicy?.decoupled !== true) {
    throw TesseraError.invalidArg(`model '${source.name}': the onnxruntime_llm backend streams tokens, so the model must be decoupled (model_transaction_policy { decoupled: true })`);
  }
  const inputs = new Set(source.config.input.map((i) => i.name));
  const outputs = new Set(source.config.output.map((o) => o.name));
  if (!inputs.has('text_input') || !outputs.has('text_output')) {
    throw TesseraError.invalidArg(`model '${source.name}': the onnxruntime_llm backend serves the vLLM-style I/O: input 'text_input' and output 'text_output'`);
  }
  const contextLength = integer('context_length', DEFAULT_CONTEXT_LENGTH, 2);
  return {
    maxNumSeqs: integer('max_num_seqs', DEFAULT_MAX_NUM_SEQS, 1),
    kvCacheBytes: integer('kv_cache_bytes', DEFAULT_KV_CACHE_BYTES, 1),
    contextLength,
    admission,
    maxQueueSize: integer('max_queue_size', 0, 0),
    tokenizerFile,
    eosToken: text('eos_token'),
    intraOpThreads: integer('intra_op_thread_count', 1, 0),
    heads,
    headDim,
    lengthBuckets: parseLengthBuckets(source.name, text('length_buckets') ?? DEFAULT_LENGTH_BUCKETS, contextLength),
    maxBatchedTokens: integer('max_num_batched_tokens', DEFAULT_MAX_BATCHED_TOKENS, 1),
    prefillOrder: parsePrefillOrder(source.name, text('prefill_order')),
    prefillAgingMs: integer('prefill_aging_ms', DEFAULT_PREFILL_AGING_MS, 0),
    decodeRunRows: parseDecodeRunRows(source.name, text('decode_run_rows'), DEFAULT_DECODE_RUN_ROWS),
    busyPrefillTokens: integer('busy_prefill_tokens', DEFAULT_BUSY_PREFILL_TOKENS, 1),
    busyPrefillGroupTokens: integer('busy_prefill_group_tokens', DEFAULT_BUSY_PREFILL_GROUP_TOKENS, 1),
    firstTokenHandoffUs: handoffUs(source.name, integer('first_token_handoff_us', DEFAULT_FIRST_TOKEN_HANDOFF_US, 0)),
  };
}

function handoffUs(model: string, us: number): number {
  if (us > MAX_FIRST_TOKEN_HANDOFF_US) {
    throw TesseraError.invalidArg(`model '${model}': parameter 'first_token_handoff_us' must be at most ${MAX_FIRST_TOKEN_HANDOFF_US}, got '${us}'`);
  }
  return us;
}
