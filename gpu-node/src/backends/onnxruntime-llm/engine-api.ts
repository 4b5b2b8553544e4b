/** What a continuous-batching engine (batch-engine.ts) takes and gives: its options, requests, model runner and events. */
import type { TesseraError } from '../../../../shared/src/errors/index.js';
import type { PrefillOrder } from './prefill-order.js';
import type { SamplingParameters } from './sampling.js';

export type FinishReason = 'stop' | 'length' | 'cancelled';

/** One sequence's news from a step: text to send, and whether (and why) it ended. */
export interface SequenceEvent {
  readonly id: number;
  readonly text: string;
  readonly tokens: number;
  readonly done?: FinishReason;
  readonly error?: TesseraError;
}

export type RunnerTensors = Readonly<Record<string, { data: Float32Array | BigInt64Array; dims: readonly number[] }>>;

/**
 * A model run: feeds by input name to outputs by name (onnxruntime's session, or a stand-in). Outputs
 * given in `into` are written into those arrays instead of new ones, and only those are fetched.
 */
export interface DecoderRunner {
  /** Per present (KvCache.presentNames order), an output holding its last position only: decode runs fetch these instead. */
  readonly lastPositionOutputs?: readonly string[];
  run(feeds: RunnerTensors, into?: RunnerTensors): Promise<Record<string, { data: Float32Array; dims: readonly number[] }>>;
}

export interface EngineOptions {
  readonly maxNumSeqs: number;
  readonly kvCacheBytes: number;
  readonly contextLength: number;
  readonly eosId: number | undefined;
  /** 'wait': a request the budget cannot take now waits; 'reject': it is refused at once. */
  readonly admission: 'wait' | 'reject';
  /** Most requests waiting for admission; 0 = no limit. */
  readonly maxQueueSize: number;
  /** Cached-length bounds of the length buckets (length-bucket.ts); [] = one padded run per step. */
  readonly lengthBuckets: readonly number[];
  /** Most padded prompt tokens (rows × longest prompt) of one prefill run; a longer prompt is prefilled alone, in chunks of this size. */
  readonly maxBatchedTokens: number;
  /** The same cap while other work is exposed to the run (prefill-cap.ts); absent = maxBatchedTokens always. */
  readonly busyPrefillTokens?: number;
  /** On a busy engine, most padded tokens of a run of two or more prompts (prefill-cap.ts); absent = busyPrefillTokens. */
  readonly busyPrefillGroupTokens?: number;
  /** Order of waiting prefills within a priority level, and its aging bound (prefill-order.ts); defaults there. */
  readonly prefillOrder?: PrefillOrder;
  readonly prefillAgingMs?: number;
  /** Most rows of one decode run: a bucket's step is cut into runs of at most this many rows, newcomers prefilled between them (decode-split.ts); 0 = one run per bucket. */
  readonly decodeRunRows?: number;
}

export interface AddRequest {
  readonly id: number;
  readonly promptIds: readonly number[];
  readonly params: SamplingParameters;
  /** Lower first, as the dynamic batcher's levels (1 is the highest); 0 = the default level. */
  readonly priority: number;
  /** When the request was sent to the engine (epoch ms, first-token-trace.ts), for the TTFT breakdown. */
  readonly sentAtMs?: number;
}
