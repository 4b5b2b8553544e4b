/**
 * `preserve_ordering`: responses leave in the order their requests were scheduled into batches, even
 * when a later batch (on another instance) finishes first. Each scheduled request takes a ticket; a
 * finished request's settlement is held until every earlier ticket has been released.
 *
 * Triton's current core creates the in-order slot only when a response arrives, which degrades to
 * completion order (reference section 13.5); this implements the documented contract instead.
 */
export class OrderedRelease {
  private nextTicket = 0;
  private nextToRelease = 0;
  private readonly ready = new Map<number, () => void>();

  /** Called when a request is placed into a batch, in batch order. */
  ticket(): number {
    return this.nextTicket++;
  }

  /**
   * Runs `settle` once every earlier ticket has been released (possibly right now). A cancelled
   * request releases its ticket with a no-op, so it never holds back the requests behind it.
   */
  release(ticket: number, settle: () => void): void {
    this.ready.set(ticket, settle);
    for (;;) {
      const next = this.ready.get(this.nextToRelease);
      if (next === undefined) return;
      this.ready.delete(this.nextToRelease);
      this.nextToRelease += 1;
      next();
    }
  }

  /** Settlements waiting for an earlier request. */
  held(): number {
    return this.ready.size;
  }
}
