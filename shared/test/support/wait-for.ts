/**
 * Polls a condition until it holds or a bounded wait runs out: integration tests wait for what they
 * expect to see (a key, a message, a state flip) instead of sleeping a guessed duration, so they
 * pass on a loaded machine and fail with a message rather than hang.
 */
export interface WaitForOptions {
  /** Give up after this long; default 30000 ms (a full suite on a loaded 2-core box took over 10 s to settle a queue). */
  readonly timeoutMs?: number;
  /** Pause between two checks; default 20 ms. */
  readonly intervalMs?: number;
  /** Named in the timeout error; default "condition". */
  readonly what?: string;
}

/** Resolves with the first value of `check` (sync or async) other than undefined, null or false; rejects after `timeoutMs`. */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitForOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>;
    } catch (error) {
      lastError = error; // a check may throw until the system is ready (e.g. a connection refused)
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'condition'}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
