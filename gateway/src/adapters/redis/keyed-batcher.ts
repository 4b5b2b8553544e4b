/**
 * Batches calls per key: at most one call per key is in flight; whatever is submitted for that key
 * while it runs waits and goes, in submission order, in the next call, all together.
 *
 * Why: the rate limiter runs one Redis script per request, and at a few thousand requests a second
 * of one tenant, writing each command and waking Redis for it was the largest single cost of a cache
 * hit. Batching behind the call in flight costs a lone request nothing (it is sent at once), and
 * under concurrency it trades at most one round trip of waiting for far fewer commands. There is no
 * timer: a batch closes when the call before it returns, never by waiting for company.
 *
 * A failed call fails every item of its batch with the same error; later batches are unaffected.
 */

/** Runs one batch: answers one result per item, in the items' order. */
export type RunBatch<I, O> = (key: string, items: readonly I[]) => Promise<readonly O[]>;

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/** The items waiting for a key whose call is in flight; a key is in the map exactly while one is. */
type Lane<I, O> = Pending<I, O>[];

/** The default largest batch: 128 items (a longer queue goes in several calls, one after another). */
export const DEFAULT_MAX_BATCH = 128;

export class KeyedBatcher<I, O> {
  private readonly lanes = new Map<string, Lane<I, O>>();

  constructor(
    private readonly run: RunBatch<I, O>,
    private readonly maxBatch: number = DEFAULT_MAX_BATCH,
  ) {
    if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new Error(`maxBatch must be a positive integer, got ${maxBatch}`);
  }

  /** Keys with a call in flight now (for tests and diagnostics). */
  get busyKeys(): number {
    return this.lanes.size;
  }

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const pending: Pending<I, O> = { item, resolve, reject };
      const lane = this.lanes.get(key);
      if (lane !== undefined) {
        lane.push(pending);
        return;
      }
      this.lanes.set(key, []);
      this.send(key, [pending]);
    });
  }

  private send(key: string, batch: readonly Pending<I, O>[]): void {
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
        this.next(key);
      },
      (error: unknown) => {
        for (const p of batch) p.reject(error);
        this.next(key);
      },
    );
  }

  /** The call for `key` returned: send what waited meanwhile, or free the key. */
  private next(key: string): void {
    const lane = this.lanes.get(key)!;
    if (lane.length === 0) {
      this.lanes.delete(key);
      return;
    }
    this.send(key, lane.splice(0, this.maxBatch));
  }
}
