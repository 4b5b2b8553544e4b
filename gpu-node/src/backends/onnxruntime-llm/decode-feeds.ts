/**
 * A decode run's feeds and output buffers over rows from..to-1 of one length bucket's cache: the past
 * tensors and the mask are views of the cache (no copy), input_ids and position_ids are written into
 * buffers kept for the purpose (runs of one engine never overlap), logits and the presents go to buffers
 * kept here and by the cache. When the model has last-position outputs (last-position-outputs.ts) the
 * run fetches those instead of the full presents ([rows, heads, 1, head_dim] each, kept here):
 * onnxruntime-node copies every fetched output out on every run, and a step keeps only that position.
 * Nothing here allocates beyond the small records and views.
 */
import type { DecoderLayout } from './decoder-layout.js';
import type { KvCache } from './kv-cache.js';

type Feeds = Record<string, { data: Float32Array | BigInt64Array; dims: readonly number[] }>;
type Into = Record<string, { data: Float32Array; dims: readonly number[] }>;

export interface DecodeRun {
  readonly feeds: Feeds;
  readonly into: Into;
  /** What the run writes per present (in the cache's `presentNames` order), for `KvCache.appendStep`. */
  readonly presents: Float32Array[];
  /** Positions per head in `presents`: capacity + 1 (full presents) or 1 (last position only). */
  readonly presentLength: number;
  /** The run's logits, [rows, 1, vocab]. */
  readonly logits: Float32Array;
}

export class DecodeFeeds {
  private readonly tokens: BigInt64Array;
  private readonly positions: BigInt64Array;
  private readonly logits: Float32Array;
  /** The last-position outputs' buffers ([maxRows, heads, 1, head_dim] each), when the model has them. */
  private readonly lastPositions: Float32Array[];

  constructor(
    private readonly layout: DecoderLayout,
    private readonly vocab: number,
    maxRows: number,
    private readonly lastPositionOutputs?: readonly string[],
  ) {
    this.tokens = new BigInt64Array(maxRows);
    this.positions = new BigInt64Array(maxRows);
    this.logits = new Float32Array(maxRows * vocab);
    this.lastPositions = (lastPositionOutputs ?? []).map(() => new Float32Array(maxRows * layout.heads * layout.headDim));
  }

  /** Bytes fetched out of onnxruntime by a run over `rows` rows of `cache` (logits and presents). */
  fetchedBytes(cache: KvCache, rows: number): number {
    const positions = this.lastPositionOutputs === undefined ? cache.capacity + 1 : 1;
    return 4 * rows * (this.vocab + cache.presentNames.length * this.layout.heads * positions * this.layout.headDim);
  }

  /** The run over rows from..to-1 of `cache`, each row feeding `nextToken(r)` at its cached length. */
  build(cache: KvCache, from: number, to: number, nextToken: (row: number) => number): DecodeRun {
    const rows = to - from;
    const { heads, headDim } = this.layout;
    const capacity = cache.capacity;
    for (let r = from; r < to; r++) {
      this.tokens[r - from] = BigInt(nextToken(r));
      this.positions[r - from] = BigInt(cache.lengths[r] as number);
    }
    const feeds: Feeds = {
      input_ids: { data: this.tokens.subarray(0, rows), dims: [rows, 1] },
      position_ids: { data: this.positions.subarray(0, rows), dims: [rows, 1] },
      attention_mask: { data: cache.maskView(from, to), dims: [rows, capacity + 1] },
    };
    const views = cache.pastViews(from, to);
    cache.pastNames.forEach((name, i) => (feeds[name] = { data: views[i] as Float32Array, dims: [rows, heads, capacity, headDim] }));
    const logits = this.logits.subarray(0, rows * this.vocab);
    const into: Into = { logits: { data: logits, dims: [rows, 1, this.vocab] } };
    const last = this.lastPositionOutputs;
    const presentLength = last === undefined ? capacity + 1 : 1;
    const presents = last === undefined ? cache.presentViews(rows) : this.lastPositions.map((b) => b.subarray(0, rows * heads * headDim));
    const names = last ?? cache.presentNames;
    names.forEach((name, i) => (into[name] = { data: presents[i] as Float32Array, dims: [rows, heads, presentLength, headDim] }));
    return { feeds, into, presents, presentLength, logits };
  }
}
