/** What a decoder engine counts (BatchEngine.stats), for the backend's metrics and the benches. */
import type { CopyCounters } from './kv-cache.js';
import type { FirstTokenTrace } from './first-token-trace.js';
import type { HandoffCounts } from './first-token-handoff.js';

export interface EngineStats {
  readonly active: number;
  readonly waiting: number;
  readonly reservedBytes: number;
  readonly allocatedBytes: number;
  readonly steps: number;
  readonly stepSequences: number;
  readonly copies: CopyCounters;
  /** Time spent in the copies of steps (ns), beside the time in the model (ns). */
  readonly stepCopyNs: number;
  readonly stepModelNs: number;
  /** Model runs of decode steps (steps × buckets with sequences in them). */
  readonly stepRuns: number;
  /** Bytes of outputs fetched out of onnxruntime by decode runs (onnxruntime-node copies each into a fresh array): logits and presents, full or last position. */
  readonly stepFetchedBytes: number;
  /** Cached positions the decode runs fed (rows × the run's capacity, summed) and of those the rows' own (their lengths): the rest is padding. */
  readonly stepPaddedPositions: number;
  readonly stepCachedPositions: number;
  /** Sequences moved into another bucket or length lane. */
  readonly bucketMoves: number;
  /** Prefills done between the bucket runs of a step (requests that arrived during it). */
  readonly prefillsBetweenRuns: number;
  /** Prefilled requests, the time they waited from arrival to their prefill (ns, summed: what a newcomer waits for) and their prefills' time (ns). */
  readonly prefills: number;
  /** Model runs of prefills (a run prefills a group of requests), their prompt tokens and their padded tokens (rows × longest). */
  readonly prefillRuns: number;
  readonly prefillTokens: number;
  readonly prefillPaddedTokens: number;
  /** Prefill runs that were chunks of a prompt longer than the budget. */
  readonly prefillChunks: number;
  readonly admissionWaitNs: number;
  readonly prefillNs: number;
  /** From arrival to the end of its prefill run (its first token sampled), summed over prefilled requests (ns): the engine's part of TTFT. */
  readonly firstTokenNs: number;
  /** Batches of events handed to `emit` (one message to the main thread each) and the events in them. */
  readonly eventMessages: number;
  readonly events: number;
  /** The last requests' first-token breakdowns (first-token-trace.ts), oldest first. */
  readonly recentFirstTokens: readonly FirstTokenTrace[];
  /** The engine thread's first-token hand-offs (first-token-handoff.ts; set by the engine thread, not the engine). */
  readonly handoff?: HandoffCounts;
}
