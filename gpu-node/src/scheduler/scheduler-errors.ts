/**
 * Errors a scheduler produces itself — refusals before queueing (stopping, queue full), queue
 * timeouts and cancellations — as opposed to errors a backend threw. The difference matters to the
 * statistics: the scheduler's queue observer already counted its own outcomes (REJECTED, CANCELED)
 * or, for refusals, Triton counts nothing, so the model version must not count them again. Backends
 * may throw the same codes (an instance worker that closed answers UNAVAILABLE), so the code alone
 * cannot tell them apart; the error object is marked instead.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';

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

/**
 * The error for a request whose AbortSignal fired: DEADLINE_EXCEEDED when the signal's reason says
 * that its deadline passed (a gRPC deadline, the gateway's deadline header), CANCELLED otherwise (the
 * client went away). Both are counted CANCELED in the statistics, as Triton counts them; the code
 * tells the caller which happened, so a client whose own deadline timer is a moment late still reads
 * DEADLINE_EXCEEDED rather than a cancellation it never asked for.
 */
export function abortReasonError(signal: { readonly reason: unknown } | undefined, cancelledMessage: string): TesseraError {
  const reason: unknown = signal?.reason;
  return reason instanceof TesseraError && reason.code === 'DEADLINE_EXCEEDED'
    ? new TesseraError('DEADLINE_EXCEEDED', reason.message)
    : TesseraError.cancelled(cancelledMessage);
}

/** `abortReasonError`, marked as the scheduler's own outcome (see `schedulerError`). */
export function abortedRequestError(signal: { readonly reason: unknown } | undefined, cancelledMessage: string): TesseraError {
  return schedulerError(abortReasonError(signal, cancelledMessage));
}
