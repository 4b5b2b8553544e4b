/**
 * The AbortSignals of the batches a worker thread has been given and not yet answered, one per request
 * index. A cancel may arrive before its batch starts (it waits in the thread's queue), so a signal's
 * controller is made on first use either way; a cancel for a batch no longer in flight is dropped, so a
 * late one leaves no entry behind. Used by both thread hosts (worker-runtime.ts, session-host.ts).
 */
export class BatchSignals {
  private readonly batches = new Map<number, Map<number, AbortController>>();

  /** Batch `id` was received: cancels for it count from now on. */
  begin(id: number): void {
    this.batches.set(id, new Map());
  }

  /** Aborts request `index` of batch `id`, when that batch is still in flight. */
  cancel(id: number, index: number): void {
    if (this.batches.has(id)) this.controller(id, index).abort();
  }

  signal(id: number, index: number): AbortSignal {
    return this.controller(id, index).signal;
  }

  /** Batch `id` was answered. */
  end(id: number): void {
    this.batches.delete(id);
  }

  private controller(id: number, index: number): AbortController {
    let batch = this.batches.get(id);
    if (batch === undefined) {
      batch = new Map();
      this.batches.set(id, batch);
    }
    let controller = batch.get(index);
    if (controller === undefined) {
      controller = new AbortController();
      batch.set(index, controller);
    }
    return controller;
  }
}
