/**
 * A batch's requests going away while it waits in a worker thread: each request's AbortSignal is
 * forwarded as `cancel(index)` (at once, in a microtask, for one already aborted), until the returned
 * function removes the listeners once the batch settled. Used by both kinds of thread
 * (instance-worker.ts, pool-thread.ts).
 */
export function forwardCancels(signals: readonly (AbortSignal | undefined)[] | undefined, cancel: (index: number) => void): () => void {
  const cleanups: (() => void)[] = [];
  (signals ?? []).forEach((signal, index) => {
    if (signal === undefined) return;
    const onAbort = (): void => cancel(index);
    if (signal.aborted) {
      queueMicrotask(onAbort);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => signal.removeEventListener('abort', onAbort));
  });
  return () => {
    for (const cleanup of cleanups) cleanup();
  };
}
