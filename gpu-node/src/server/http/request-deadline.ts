/**
 * The gateway's deadline header (`x-tessera-deadline-ms`, see shared/src/fleet/request-headers.ts):
 * the request's remaining time becomes an AbortSignal that fires when it runs out, combined with the
 * client-disconnect signal, so a request still queued at its deadline leaves the queue unexecuted
 * (counted CANCELED) exactly as a gRPC deadline makes it.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';

/** setTimeout fires at once past 2^31-1 ms; a deadline that far away needs no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RequestDeadline {
  /** Fires on client disconnect or at the deadline. */
  readonly signal: AbortSignal;
  /** True once the deadline (not the client) aborted the request. */
  readonly expired: () => boolean;
  /** Clears the timer; call when the request settles. */
  readonly dispose: () => void;
}

// Shared by every request without a deadline (the common case): no closures made per request.
const neverExpired = (): boolean => false;
const nothingToDispose = (): void => undefined;
const FOLLOW_ONCE = { once: true } as const;

/** Remaining ms from the header: undefined when absent; INVALID_ARG (400) naming the header when malformed. */
export function parseDeadlineHeader(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  const ms = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(ms)) {
    throw TesseraError.invalidArg(
      `invalid '${DEADLINE_HEADER}' header: expected the remaining time in milliseconds, an integer >= 0, got '${value}'`,
    );
  }
  return ms;
}

/**
 * @param headerValue the deadline header's value (null when absent)
 * @param clientSignal fires when the client disconnects
 */
export function requestDeadline(headerValue: string | null, clientSignal: AbortSignal): RequestDeadline {
  const remainingMs = parseDeadlineHeader(headerValue);
  if (remainingMs === undefined || remainingMs >= MAX_TIMER_MS) {
    return { signal: clientSignal, expired: neverExpired, dispose: nothingToDispose };
  }
  // The client signal may be the connection's, alive across many requests (connection-signal.ts): it
  // is followed by a listener removed on dispose, not by AbortSignal.any, which would leave a
  // dependant behind on it for every request until a collection.
  const controller = new AbortController();
  let expired = false;
  const expire = (): void => {
    expired = true;
    controller.abort(TesseraError.deadlineExceeded('the request deadline passed'));
  };
  const follow = (): void => controller.abort(clientSignal.reason);
  let timer: NodeJS.Timeout | undefined;
  if (clientSignal.aborted) follow();
  else clientSignal.addEventListener('abort', follow, FOLLOW_ONCE);
  // 0: already out of time; it is still queued and cancelled at once, so it is counted like the others.
  if (remainingMs === 0) expire();
  else timer = setTimeout(expire, remainingMs).unref();
  return {
    signal: controller.signal,
    expired: () => expired,
    dispose: () => {
      clearTimeout(timer);
      clientSignal.removeEventListener('abort', follow);
    },
  };
}

/** The deadline of a Web Request (the Hono route). */
export function webRequestDeadline(request: Request): RequestDeadline {
  return requestDeadline(request.headers.get(DEADLINE_HEADER), request.signal);
}
