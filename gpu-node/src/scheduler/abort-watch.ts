/**
 * Abort listeners of queued requests, kept in one Set per signal behind a single EventTarget listener.
 * Node's addEventListener and removeEventListener cost about a microsecond each (an options object, a
 * listener record, a linked-list walk), twice per request; an HTTP connection's signal is shared by all
 * its requests (server/http/connection-signal.ts), so here a request costs a Set add and delete. The
 * signal's one listener stays until it fires; a handler is called at most once, in the order added, as
 * `{ once: true }` listeners are.
 */
import type { AbortHandler, Cancellable } from './call-cancellation.js';

export type { AbortHandler } from './call-cancellation.js';

const watchers = new WeakMap<AbortSignal, Set<AbortHandler>>();

/** Calls `handler.handleEvent()` once when `signal` aborts, unless `unwatchAbort` comes first. Not for a signal already aborted. */
export function watchAbort(signal: Cancellable, handler: AbortHandler): void {
  // A call's own cancellation record keeps its handlers itself: no signal, no listener, no Set.
  if (!(signal instanceof AbortSignal)) {
    signal.addAbortHandler(handler);
    return;
  }
  let handlers = watchers.get(signal);
  if (handlers === undefined) {
    handlers = new Set();
    watchers.set(signal, handlers);
    signal.addEventListener('abort', fireHandlers, { once: true });
  }
  handlers.add(handler);
}

export function unwatchAbort(signal: Cancellable, handler: AbortHandler): void {
  if (!(signal instanceof AbortSignal)) {
    signal.removeAbortHandler(handler);
    return;
  }
  watchers.get(signal)?.delete(handler);
}

/** Handlers waiting on `signal` (for tests: none is left once its requests settle). */
export function abortWatcherCount(signal: AbortSignal): number {
  return watchers.get(signal)?.size ?? 0;
}

function fireHandlers(event: Event): void {
  const signal = event.target as AbortSignal;
  const handlers = watchers.get(signal);
  // Taken off first: a handler that unwatches another one during the loop finds nothing to change.
  watchers.delete(signal);
  if (handlers === undefined) return;
  for (const handler of handlers) {
    try {
      handler.handleEvent();
    } catch (error) {
      // As EventTarget does with a throwing listener: reported as uncaught, the other handlers still run.
      process.nextTick(() => {
        throw error;
      });
    }
  }
}
