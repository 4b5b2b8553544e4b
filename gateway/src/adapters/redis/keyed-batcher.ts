/**
 * Batches calls per key: what is submitted for a key during one turn of the event loop goes in one
 * call, sent at the end of that turn; while a key's call is in flight, what is submitted for it waits
 * and goes, in submission order, in the next call.
 *
 * Why: the rate limiter runs one Redis script per request, and at a few thousand requests a second
 * of one tenant, writing each command (a syscall that also wakes Redis) was the largest single cost
 * of a cache hit. There is no timer: a lone request is sent at the end of the event-loop turn that
 * submitted it (setImmediate: after the I/O callbacks of this turn, before any timer or new I/O
 * wait), so it waits only for the code already running; requests that arrive meanwhile, e.g. from
 * other sockets that were readable in the same turn, share its call. Under load, a key has at most
 * one call in flight, and everything submitted during it waits at most that one round trip.
 *
 * A failed call fails every item of its batch with the same error; later batches are unaffected.
 */

/** Runs one batch: answers one result per item, in the items' order. */
export type RunBatch<I, O> = (key: string, items: readonly I[]) => Promise<readonly O[]>;

/** Runs `task` at the end of the current event-loop turn; default setImmediate. */
export type EndOfTurn = (task: () => void) => void;

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/** A key with items waiting or a call in flight; the key leaves the map when it has neither. */
interface Lane<I, O> {
  readonly waiting: Pending<I, O>[];
  inFlight: boolean;
  flushScheduled: boolean;
}

/** The default largest batch: 128 items (a longer queue goes in several calls, one after another). */
export const DEFAULT_MAX_BATCH = 128;

export interface KeyedBatcherOptions {
  /** Most items in one call; default 128. */
  readonly maxBatch?: number;
  /** Default setImmediate. */
  readonly endOfTurn?: EndOfTurn;
}

export class KeyedBatcher<I, O> {
  private readonly lanes = new Map<string, Lane<I, O>>();
  private readonly maxBatch: number;
  private readonly endOfTurn: EndOfTurn;

  constructor(
    private readonly run: RunBatch<I, O>,
    options: KeyedBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    if (!Number.isSafeInteger(this.maxBatch) || this.maxBatch < 1) throw new Error(`maxBatch must be a positive integer, got ${this.maxBatch}`);
    this.endOfTurn = options.endOfTurn ?? setImmediate;
  }

  /** Keys with items waiting or a call in flight (for tests and diagnostics). */
  get busyKeys(): number {
    return this.lanes.size;
  }

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (lane === undefined) {
        lane = { waiting: [], inFlight: false, flushScheduled: false };
        this.lanes.set(key, lane);
      }
      lane.waiting.push({ item, resolve, reject });
      this.scheduleFlush(key, lane);
    });
  }

  private scheduleFlush(key: string, lane: Lane<I, O>): void {
    if (lane.inFlight || lane.flushScheduled) return;
    lane.flushScheduled = true;
    this.endOfTurn(() => this.flush(key, lane));
  }

  private flush(key: string, lane: Lane<I, O>): void {
    lane.flushScheduled = false;
    if (lane.inFlight) return;
    if (lane.waiting.length === 0) {
      this.lanes.delete(key);
      return;
    }
    const batch = lane.waiting.splice(0, this.maxBatch);
    lane.inFlight = true;
    let call: Promise<readonly O[]>;
    try {
      call = this.run(
        key,
        batch.map((p) => p.item),
      );
    } catch (error) {
      call = Promise.reject(error);
    }
    call.then(
      (results) => {
        if (results.length !== batch.length) {
          const error = new Error(`a batch of ${batch.length} got ${results.length} results`);
          for (const p of batch) p.reject(error);
        } else {
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
        }
        this.settled(key, lane);
      },
      (error: unknown) => {
        for (const p of batch) p.reject(error);
        this.settled(key, lane);
      },
    );
  }

  /** The lane's call returned: what waited meanwhile goes at the end of this turn, or the key is freed. */
  private settled(key: string, lane: Lane<I, O>): void {
    lane.inFlight = false;
    if (lane.waiting.length === 0) {
      this.lanes.delete(key);
      return;
    }
    this.scheduleFlush(key, lane);
  }
}
