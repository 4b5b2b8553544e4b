/**
 * A request's cancellation without an AbortSignal: the node's gRPC fast path hands the scheduler its
 * call record (shared/src/grpc/h2-unary-call.ts), which tells the handlers given to it when the client
 * resets the stream or the deadline passes. An AbortSignal per call (controller, signal, an EventTarget
 * listener, a Set in abort-watch.ts) was ~5% of a `simple` gRPC call's CPU and outlived the wave's
 * scavenges (docs/benchmarks.md, issue 18, eighth pass). A real signal is made only where one is read:
 * a backend that watches its requests' signals (TypeScript models, ensembles, LLMs).
 */
import type { AbortHandler } from '../../../shared/src/grpc/h2-unary-call.js';

/** What is told of the abort: an object with a method, not a closure per request (the call record's own type). */
export type { AbortHandler };

export interface CallCancellation {
  readonly aborted: boolean;
  /** Why it aborted (a TesseraError: CANCELLED or DEADLINE_EXCEEDED); undefined while it has not. */
  readonly reason: unknown;
  /** An AbortSignal that follows this cancellation, made on first read (already aborted if it has). */
  readonly signal: AbortSignal;
  /** `handler.handleEvent()` once when it aborts, unless removed first. Not for one already aborted. */
  addAbortHandler(handler: AbortHandler): void;
  removeAbortHandler(handler: AbortHandler): void;
}

/** What a request may carry to say it was cancelled. */
export type Cancellable = AbortSignal | CallCancellation;

/** The AbortSignal of `cancellable` (made now for a CallCancellation that had none). */
export function abortSignalOf(cancellable: Cancellable): AbortSignal;
export function abortSignalOf(cancellable: Cancellable | undefined): AbortSignal | undefined;
export function abortSignalOf(cancellable: Cancellable | undefined): AbortSignal | undefined {
  return cancellable === undefined || cancellable instanceof AbortSignal ? cancellable : cancellable.signal;
}
