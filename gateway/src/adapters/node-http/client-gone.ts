/**
 * A request's "the client went away" as a CancelSignal (core/http/cancellation.ts) without an AbortController:
 * a flag and the few listeners on the way to the node (admission, the node's request, the relay).
 *
 * Why: an AbortController with its AbortSignal and EventTarget was ~40 µs of a first token's cold path, made once
 * per stream (docs/benchmarks.md, issue 20, 2026-11-28a); almost no stream is ever cancelled, so nothing of
 * that machinery is needed up front. Listeners run once, in the order added, on the first `abort`; one added
 * after it never runs (as an AbortSignal's). Unlike EventTarget, a listener added twice runs twice: callers add each once.
 */
import type { CancelSignal } from '../../core/http/index.js';

export class ClientGone implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (listeners === undefined) return;
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }

  /** Marks the client gone and runs every listener once; later calls do nothing. */
  abort(reason: unknown = new Error('the client closed the connection')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    // Every listener runs even when one throws (as EventTarget's do); the first error is thrown after them.
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}
