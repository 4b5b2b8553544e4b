/**
 * Errors a scheduler produces itself — refusals before queueing (stopping, queue full), queue
 * timeouts and cancellations — as opposed to errors a backend threw. The difference matters to the
 * statistics: the scheduler's queue observer already counted its own outcomes (REJECTED, CANCELED)
 * or, for refusals, Triton counts nothing, so the model version must not count them again. Backends
 * may throw the same codes (an instance worker that closed answers UNAVAILABLE), so the code alone
 * cannot tell them apart; the error object is marked instead.
 */
const produced = new WeakSet<object>();

/** Marks `error` as the scheduler's own outcome and returns it. */
export function schedulerError<E extends Error>(error: E): E {
  produced.add(error);
  return error;
}

/** True for an error made by `schedulerError`: the scheduler accounts for it, not the caller. */
export function isSchedulerError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && produced.has(error);
}
