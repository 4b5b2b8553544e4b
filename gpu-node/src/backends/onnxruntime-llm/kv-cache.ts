/**
 * The KV cache of one engine, laid out as the model's own past inputs so a decode step feeds it with no
 * copy: per layer and key/value one Float32Array [rows, heads, capacity, head_dim], whose first B rows
 * are exactly the `past_key_values` tensor of a step over B sequences (row r = the r-th active sequence).
 * Sequences keep their tokens at positions 0..length-1 of their row; the rest of the row is padding the
 * attention mask hides. The mask [rows, capacity + 1] is kept beside it (the last column is the new token).
 *
 * onnxruntime-node (1.30) hands back a fresh JS copy of every fetched output of every run, kept buffers or
 * not: fetching the full presents of a 32-row run at capacity 128 copied ~3.5 MiB of ArrayBuffers out per
 * run (docs/benchmarks.md, sixth pass). So when the model takes them (last-position-outputs.ts), a decode
 * run fetches only each present's last position ([rows, heads, 1, head_dim]: 32 KiB over 32 rows of the
 * tiny decoder, beside the logits' 32 KiB), kept by DecodeFeeds; otherwise the full presents, written into
 * buffers kept here. Prefills still fetch the full presents (their whole prompt is cached).
 *
 * What a step copies: the new token's key and value into each row (heads × head_dim floats per layer and
 * kind), nothing else (the model's own past-to-present concatenation is the model's work). Beside steps: a
 * prefill's cache into a fresh row, the last row into the hole a leaving sequence leaves (rows stay dense),
 * and every row at a re-layout (rows or capacity moved: tens of times a second under mixed lengths, each into
 * new buffers). Every copy is counted.
 */
import type { DecoderLayout } from './decoder-layout.js';

export interface CopyCounters {
  /** Floats copied for new tokens (the per-step part). */
  stepFloats: number;
  /** Floats copied in from prefills. */
  prefillFloats: number;
  /** Floats moved to close holes. */
  compactFloats: number;
  /** Floats moved when the buffer grew. */
  growFloats: number;
  /** Floats moved when a sequence outgrew its length bucket into the next one. */
  bucketFloats: number;
}

/** Re-layouts of every cache of this thread and the bytes of the new arrays they allocated (the GC samples report them). */
export const kvRelayouts = { count: 0, newBytes: 0 };

/**
 * Capacity moves in steps of this many positions. Every position above a run's longest row is padding each row pays
 * (~0.76 µs per row and position on bench_decoder); 16 halves the 32 of before for about twice the re-layouts
 * (~100 KB more copied a step at 32 streams: docs/benchmarks.md, issue 21, 2026-11-28a).
 */
const CAPACITY_STEP = 16;

export class KvCache {
  /** One buffer per past input, in `pastNames` order. */
  private buffers: Float32Array[] = [];
  /** Where a step's presents are written ([rows, heads, capacity + 1, head_dim] each), reused every step. */
  private presents: Float32Array[] = [];
  mask = new BigInt64Array(0);
  rows = 0;
  capacity = 0;
  /** Active sequences' lengths, by row. */
  readonly lengths: number[] = [];
  readonly copies: CopyCounters = { stepFloats: 0, prefillFloats: 0, compactFloats: 0, growFloats: 0, bucketFloats: 0 };
  readonly pastNames: readonly string[];
  readonly presentNames: readonly string[];
  private readonly rowFloatsPerPosition: number;

  constructor(
    private readonly layout: DecoderLayout,
    private readonly maxRows: number,
    private readonly maxCapacity: number,
    /** Whether decode runs write full presents here; not when they fetch only the last position (DecodeFeeds keeps those). */
    private readonly keepsPresents = true,
  ) {
    const names: string[] = [];
    const presents: string[] = [];
    for (let i = 0; i < layout.layers; i++) {
      for (const kind of ['key', 'value']) {
        names.push(`past_key_values.${i}.${kind}`);
        presents.push(`present.${i}.${kind}`);
      }
    }
    this.pastNames = names;
    this.presentNames = presents;
    this.rowFloatsPerPosition = layout.heads * layout.headDim;
  }

  get active(): number {
    return this.lengths.length;
  }

  /** Bytes the buffers, the step's output buffers and the mask hold now (0 once every sequence has left). */
  get allocatedBytes(): number {
    return [...this.buffers, ...this.presents].reduce((sum, b) => sum + b.byteLength, 0) + this.mask.byteLength;
  }

  /** The buffers the present outputs of a run over `rows` rows go to (onnxruntime writes them in place). */
  presentViews(rows = this.active): Float32Array[] {
    const floats = rows * this.rowFloatsPerPosition * (this.capacity + 1);
    return this.presents.map((b) => b.subarray(0, floats));
  }

  /** The past tensors' data for a run over rows from..to-1 (all active rows unless told): views, not copies. */
  pastViews(from = 0, to = this.active): Float32Array[] {
    const rowFloats = this.rowFloatsPerPosition * this.capacity;
    return this.buffers.map((b) => b.subarray(from * rowFloats, to * rowFloats));
  }

  /** One row's data per past input ([heads, capacity, head_dim] views, no copy), for `addRow` of another cache. */
  rowSources(row: number): Float32Array[] {
    const rowFloats = this.layout.heads * this.capacity * this.layout.headDim;
    return this.buffers.map((b) => b.subarray(row * rowFloats, (row + 1) * rowFloats));
  }

  maskView(from = 0, to = this.active): BigInt64Array {
    return this.mask.subarray(from * (this.capacity + 1), to * (this.capacity + 1));
  }

  /**
   * Makes room for `extraRows` more rows and for every row to grow by one token. Capacity follows the
   * longest sequence in steps of CAPACITY_STEP (every step's attention and the model's own past-to-present
   * copy cost rows × capacity), growing ahead by one step and shrinking once two steps are unused.
   */
  prepareStep(extraRows: number, longest: number): void {
    const needRows = this.active + extraRows;
    let needCapacity = longest + 1;
    for (const length of this.lengths) needCapacity = Math.max(needCapacity, length + 1);
    const tooSmall = needRows > this.rows || needCapacity > this.capacity;
    const tooLarge = this.capacity - needCapacity >= 2 * CAPACITY_STEP;
    if (!tooSmall && !tooLarge) return;
    const rows = needRows > this.rows ? Math.min(this.maxRows, Math.max(needRows, this.rows * 2, 1)) : this.rows;
    const capacity = Math.min(Math.max(this.maxCapacity, needCapacity), Math.ceil(needCapacity / CAPACITY_STEP) * CAPACITY_STEP + CAPACITY_STEP);
    this.relayout(Math.max(rows, needRows), capacity);
  }

  /**
   * Adds a sequence of `length` cached positions; returns its row. `sources` per past input, each
   * [heads, stride, head_dim] with the positions first: a prefill's presents (stride = length) or another
   * cache's row (`rowSources`, stride = its capacity) when a sequence moves between length buckets.
   */
  addRow(sources: readonly Float32Array[], length: number, stride = length, kind: 'prefill' | 'bucket' = 'prefill'): number {
    this.prepareStep(1, length);
    const row = this.active;
    const { capacity } = this;
    const width = this.layout.headDim;
    for (let t = 0; t < this.buffers.length; t++) {
      const buffer = this.buffers[t] as Float32Array;
      const source = sources[t] as Float32Array;
      for (let h = 0; h < this.layout.heads; h++) {
        buffer.set(source.subarray(h * stride * width, (h * stride + length) * width), ((row * this.layout.heads + h) * capacity) * width);
      }
    }
    const floats = this.buffers.length * length * this.rowFloatsPerPosition;
    if (kind === 'prefill') this.copies.prefillFloats += floats;
    else this.copies.bucketFloats += floats;
    this.lengths.push(length);
    this.writeMaskRow(row);
    return row;
  }

  /**
   * Takes each row's new token from the presents of a run over rows from..to-1 ([to - from, heads,
   * positions, head_dim], the new token last: the full presents, positions = capacity + 1, or the
   * last-position outputs, positions = 1) into position `length` of its row.
   */
  appendStep(presents: readonly Float32Array[], first = 0, end = this.active, positions = this.capacity + 1): void {
    const { capacity } = this;
    const width = this.layout.headDim;
    const heads = this.layout.heads;
    for (let t = 0; t < this.buffers.length; t++) {
      const buffer = this.buffers[t] as Float32Array;
      const present = presents[t] as Float32Array;
      for (let r = first; r < end; r++) {
        const length = this.lengths[r] as number;
        for (let h = 0; h < heads; h++) {
          const from = (((r - first) * heads + h) * positions + positions - 1) * width;
          buffer.set(present.subarray(from, from + width), ((r * heads + h) * capacity + length) * width);
        }
      }
    }
    this.copies.stepFloats += this.buffers.length * (end - first) * this.rowFloatsPerPosition;
    for (let r = first; r < end; r++) {
      const length = this.lengths[r] as number;
      this.mask[r * (capacity + 1) + length] = 1n;
      this.lengths[r] = length + 1;
    }
  }

  /**
   * Removes a row; the last row moves into its place so the active rows stay dense. Returns the row that
   * moved (its old index), or -1 when the removed row was the last one.
   */
  removeRow(row: number): number {
    const last = this.active - 1;
    let moved = -1;
    if (row !== last) {
      const rowFloats = this.layout.heads * this.capacity * this.layout.headDim;
      for (const buffer of this.buffers) buffer.copyWithin(row * rowFloats, last * rowFloats, (last + 1) * rowFloats);
      this.copies.compactFloats += this.buffers.length * rowFloats;
      this.lengths[row] = this.lengths[last] as number;
      moved = last;
    }
    this.lengths.pop();
    if (row !== last) this.writeMaskRow(row);
    if (this.active === 0) this.release();
    return moved;
  }

  private writeMaskRow(row: number): void {
    const width = this.capacity + 1;
    const length = this.lengths[row] as number;
    const start = row * width;
    this.mask.fill(1n, start, start + length);
    this.mask.fill(0n, start + length, start + width - 1);
    this.mask[start + width - 1] = 1n;
  }

  private relayout(rows: number, capacity: number): void {
    const width = this.layout.headDim;
    const heads = this.layout.heads;
    const next = this.buffers.length > 0 ? this.buffers : Array.from({ length: this.layout.layers * 2 }, () => new Float32Array(0));
    this.buffers = next.map((old) => {
      const fresh = new Float32Array(rows * heads * capacity * width);
      for (let r = 0; r < this.active; r++) {
        for (let h = 0; h < heads; h++) {
          const length = this.lengths[r] as number;
          const from = (r * heads + h) * this.capacity * width;
          fresh.set(old.subarray(from, from + length * width), (r * heads + h) * capacity * width);
          this.copies.growFloats += length * width;
        }
      }
      return fresh;
    });
    this.presents = this.keepsPresents ? this.buffers.map(() => new Float32Array(rows * heads * (capacity + 1) * width)) : [];
    this.rows = rows;
    this.capacity = capacity;
    this.mask = new BigInt64Array(rows * (capacity + 1));
    for (let r = 0; r < this.active; r++) this.writeMaskRow(r);
    kvRelayouts.count += 1;
    kvRelayouts.newBytes += this.allocatedBytes;
  }

  /** Every sequence left: the memory goes back. */
  private release(): void {
    this.buffers = [];
    this.presents = [];
    this.mask = new BigInt64Array(0);
    this.rows = 0;
    this.capacity = 0;
  }
}
