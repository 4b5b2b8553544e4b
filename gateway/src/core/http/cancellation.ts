/**
 * A request's cancellation (the client went away), readable without making an AbortSignal.
 *
 * Why: creating an AbortController per request was about 3 % of a cache hit's CPU, and a hit never
 * hands the signal to anything (only the upstream call, the admission queue and coalesced flights
 * listen to it). An adapter that can say whether its client left without a signal (the node:http
 * fast path) implements this with a class whose `signal` is made on first read; one that already
 * has a signal wraps it with `cancellationOf`.
 */
export interface Cancellation {
  /** True once the client went away; reading it makes no signal. */
  readonly aborted: boolean;
  /** Aborts when the client goes away; made on first read where the adapter can. */
  readonly signal: AbortSignal;
  /**
   * The same without an AbortSignal, where the adapter has one (the node:http fast path): what the
   * cache, the dispatcher and the upstream call listen to. Absent: they listen to `signal`.
   */
  readonly watch?: CancelSignal;
}

/**
 * What listens for a request's cancellation on the way to the node (admission, the cache's flights,
 * the upstream call): the part of AbortSignal they use, so an AbortSignal is one. Why: an
 * AbortController and its EventTarget listener cost a miss ~1.5-2% of its CPU (docs/benchmarks.md,
 * issue 17, eighth pass); an adapter that can tell when its client left implements this directly.
 * Code that hands a signal to a Web API (fetch) turns it into one with `toAbortSignal`.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** `signal` itself when it is an AbortSignal, else one that aborts with it. */
export function toAbortSignal(signal: CancelSignal): AbortSignal {
  if (signal instanceof AbortSignal) return signal;
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  return controller.signal;
}

/** What a request's cancellation is listened to by: its `watch` where it has one, else its signal. */
export function cancelSignalOf(cancel: Cancellation): CancelSignal {
  return cancel.watch ?? cancel.signal;
}

class SignalCancellation implements Cancellation {
  constructor(readonly signal: AbortSignal) {}

  get aborted(): boolean {
    return this.signal.aborted;
  }
}

/** The cancellation of a request that already has its signal. */
export function cancellationOf(signal: AbortSignal): Cancellation {
  return new SignalCancellation(signal);
}
