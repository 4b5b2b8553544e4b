/**
 * Input buffers of batches, reused from one wave to the next. A wave of 64 mlp_large requests joined
 * its inputs into a fresh 256 KB buffer, moved it to the worker thread and dropped it there: a zeroed
 * allocation per wave, and external memory that drives V8's mark-compacts (docs/benchmarks.md, issue
 * 18, 2026-11-26f). The worker now hands each input buffer back with its reply, once the run is over
 * and only when no output shares it (onnxruntime-sessions.ts `spentInputs`), and the next wave of the
 * same size is joined into it.
 *
 * Why a given buffer is never seen by anyone else: it is this pool's alone from `give` to `take`
 * (the worker's copy was detached by the transfer back), `take` hands it to one batch, whose join
 * writes every byte of it (concatBatch checks the length), and it is moved to the worker again before
 * the join's caller returns; no answer refers to an input buffer. Memory stays bounded: at most
 * `maxBuffers` buffers and `maxBytes` bytes are kept, the rest are left to the GC.
 */
export class BatchBufferPool {
  private readonly free: ArrayBuffer[] = [];
  private bytes = 0;

  constructor(
    private readonly maxBuffers = 4,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  /** `size` bytes the caller owns: a kept buffer of exactly that size, else a fresh one. Its old bytes are overwritten by the caller. */
  take(size: number): Uint8Array {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const buffer = this.free[i] as ArrayBuffer;
      if (buffer.byteLength !== size) continue;
      this.free.splice(i, 1);
      this.bytes -= size;
      return new Uint8Array(buffer);
    }
    return new Uint8Array(size);
  }

  /** Keeps `buffer` for a later batch when there is room; a detached (empty) or shared one is not kept. */
  give(buffer: ArrayBuffer): void {
    const size = buffer.byteLength;
    if (!(buffer instanceof ArrayBuffer) || size === 0) return;
    if (this.free.includes(buffer)) return;
    if (this.bytes + size > this.maxBytes) return;
    // The oldest kept buffer makes room: the sizes in use move (a [32, 64] config forms both).
    if (this.free.length >= this.maxBuffers) this.bytes -= (this.free.shift() as ArrayBuffer).byteLength;
    this.free.push(buffer);
    this.bytes += size;
  }

  /** Buffers kept now (tests, figures). */
  get size(): number {
    return this.free.length;
  }
}
