/**
 * How handler outcomes become gRPC statuses. The code mapping itself is shared/src/errors' grpcStatusOf;
 * this file only shapes grpc-js's error object and wires the AbortSignal to a call's lifetime.
 */
import { Metadata } from '@grpc/grpc-js';
import type { Deadline, ServerErrorResponse } from '@grpc/grpc-js';
import { TesseraError, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import { MalformedMessage } from '../../../../shared/src/grpc/index.js';
import type { Incoming } from '../../../../shared/src/grpc/index.js';

/** A grpc-js error status for anything thrown; unknown throwables become INTERNAL with their message. */
export function toServiceError(err: unknown, trailer?: Metadata): ServerErrorResponse {
  const tessera = toTesseraError(err);
  return Object.assign(new Error(tessera.message), {
    code: grpcStatusOf(tessera.code),
    details: tessera.message,
    metadata: trailer ?? new Metadata(),
  });
}

/** The decoded request, or the INVALID_ARG the deserializer recorded for undecodable bytes. */
export function requireMessage<T>(incoming: Incoming<T>): T {
  if (incoming instanceof MalformedMessage) throw incoming.error;
  return incoming;
}

const MAX_TIMER_MS = 2 ** 31 - 1;
const DEADLINE_SLACK_MS = 100;

/** What callSignal needs of a grpc-js server call, unary or streaming (grpc-js does not export its own type). */
export interface SurfaceCall {
  readonly cancelled: boolean;
  getDeadline(): Deadline;
  on(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
}

function deadlineMs(call: SurfaceCall): number {
  const deadline = call.getDeadline();
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * An AbortSignal that fires when the client cancels the call or its deadline passes, so the core can
 * drop work nobody will read. grpc-js answers DEADLINE_EXCEEDED itself on expiry, but whether it also
 * reports the call as cancelled depends on timing, so the deadline gets its own timer here.
 * Call `dispose` when the work settles to release the listener and the timer.
 */
export function callSignal(call: SurfaceCall): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const deadline = deadlineMs(call);
  const expire = (): void => controller.abort(TesseraError.deadlineExceeded('the request deadline passed'));
  // A client whose deadline expires resets the stream (RST_STREAM CANCEL), which reaches us as a plain
  // cancellation, often just before our own deadline timer: the wire cannot tell the two apart, so a
  // cancellation this close to the deadline is counted as the deadline.
  const onCancel = (): void =>
    Date.now() >= deadline - DEADLINE_SLACK_MS
      ? expire()
      : controller.abort(TesseraError.cancelled('the client cancelled the request'));
  call.on('cancelled', onCancel);
  let timer: NodeJS.Timeout | undefined;
  const remaining = deadline - Date.now();
  if (Number.isFinite(remaining)) {
    if (remaining <= 0) expire();
    // setTimeout fires at once for delays past 2^31-1 ms; a deadline weeks away needs no timer.
    else if (remaining < MAX_TIMER_MS) timer = setTimeout(expire, remaining).unref();
  }
  if (call.cancelled) onCancel();
  return {
    signal: controller.signal,
    dispose: () => {
      call.off('cancelled', onCancel);
      if (timer) clearTimeout(timer);
    },
  };
}
