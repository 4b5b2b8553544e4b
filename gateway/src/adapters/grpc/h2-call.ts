/**
 * The lifecycle every gRPC call on a node's HTTP/2 connection (h2-node-connection.ts) shares, whatever its
 * answer: a POST of one framed message with `te: trailers` and `grpc-timeout`, half-closed at once; the
 * deadline and `signal` enforced here (the stream is reset with CANCEL; DEADLINE_EXCEEDED / CANCELLED);
 * the status read from the trailers or a trailers-only answer; and, when no status came, why the stream
 * ended, which decides the status and `notAccepted` (true only when the node cannot have seen the call:
 * no connection, backoff, never sent, or refused). What a call does with the answer's bytes and its
 * status is the caller's (h2-unary-call.ts, h2-stream-call.ts).
 */
import type { CancelSignal } from '../../core/http/index.js';
import { constants } from 'node:http2';
import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { grpcTimeoutHeader } from '../../../../shared/src/grpc/index.js';
import { upstreamError } from './grpc-errors.js';
import type { UpstreamError } from './grpc-errors.js';
import { CallDeadlines, type DeadlineEntry } from './h2-call-deadlines.js';
import { statusFromHttpStatus, statusFromResetCode } from './h2-call-status.js';
import { ConnectBackoff } from './h2-node-connection.js';
import type { NodeConnection, NodeSession } from './h2-node-connection.js';

export interface H2Call {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** The request message, framed (shared/src/grpc/grpc-frame.ts): one buffer, or the prefix and the message. */
  readonly body: readonly Uint8Array[];
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  readonly signal?: CancelSignal;
  /** Extra request headers (trace context, `triton_grpc_error`); lowercase names. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Largest answer message accepted; larger ones fail RESOURCE_EXHAUSTED. */
  readonly maxReceiveBytes: number;
}

/** What a call's answer handling can see and do while the stream is open. */
export interface CallControl {
  /** Ends the call here with `error` (an oversized or refused answer): the stream is reset. */
  fail(error: unknown): void;
  readonly settled: boolean;
}

export interface AnswerHandling<T> {
  /** A chunk of the answer's bytes. */
  data(chunk: Buffer, control: CallControl): void;
  /**
   * The node's status arrived (`headersReceived`: its handler had answered with headers first). Returns
   * the call's result, or throws the call's error.
   */
  settle(status: IncomingHttpHeaders, headersReceived: boolean): T;
  /** Whether a refused stream still means the node never ran the call (a stream that delivered messages did). */
  refusedMeansNotSent(): boolean;
  /** A session refusing a new stream at once (closing under us) is replaced once. */
  readonly reopenClosingSession: boolean;
}

/** setTimeout fires at once for longer delays; a deadline that far away needs no timer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Every call's deadline on one timer (h2-call-deadlines.ts says why), the raw client's calls' too (h2-raw-call.ts). */
export const deadlines = new CallDeadlines();

export const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function openStream(connection: NodeConnection, headers: OutgoingHttpHeaders, reopen: boolean): { session: NodeSession; stream: ClientHttp2Stream } {
  for (let attempt = 0; ; attempt++) {
    const session = connection.session();
    try {
      return { session, stream: session.h2.request(headers) };
    } catch (error) {
      if (!reopen) throw error;
      connection.retire(session);
      if (attempt > 0) throw error;
    }
  }
}

export function h2Call<T>(connection: NodeConnection, nodeId: string, call: H2Call, answer: AnswerHandling<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const notSent = (details: string, cause?: unknown): UpstreamError => upstreamError({ code: GrpcStatus.UNAVAILABLE, details }, nodeId, true, undefined, cause);
    const headers: OutgoingHttpHeaders = {
      ...call.metadata,
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: call.path,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      [constants.HTTP2_HEADER_TE]: 'trailers',
      'grpc-timeout': grpcTimeoutHeader(call.deadline - Date.now()),
    };
    let session: NodeSession;
    let stream: ClientHttp2Stream;
    try {
      ({ session, stream } = openStream(connection, headers, answer.reopenClosingSession));
    } catch (error) {
      reject(error instanceof ConnectBackoff ? notSent(error.message) : notSent(`the call could not be started: ${(error as Error).message}`, error));
      return;
    }
    session.inflight++;
    session.calls++;

    let settled = false;
    /** Response headers without a status: the node started answering. */
    let headersReceived = false;
    let httpStatus: number | undefined;
    /** The headers that carried grpc-status: the trailers, or the headers of a trailers-only answer. */
    let statusHeaders: IncomingHttpHeaders | undefined;
    let streamError: Error | undefined;
    let deadline: DeadlineEntry | undefined;

    const cleanup = (): void => {
      settled = true;
      if (deadline !== undefined) deadlines.cancel(deadline);
      call.signal?.removeEventListener('abort', onAbort);
    };
    /** A failure decided here (deadline, cancellation, a refused answer): reset the stream, stop listening. */
    const failLocally = (error: unknown): void => {
      if (settled) return;
      cleanup();
      reject(error);
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    const control: CallControl = {
      fail: failLocally,
      get settled() {
        return settled;
      },
    };
    const onAbort = (): void => failLocally(upstreamError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, nodeId, false, undefined));
    const onDeadline = (): void => failLocally(upstreamError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }, nodeId, false, undefined));
    if (call.deadline - Date.now() < MAX_TIMER_MS) deadline = deadlines.add(call.deadline, onDeadline);
    call.signal?.addEventListener('abort', onAbort, { once: true });
    if (call.signal?.aborted) onAbort();

    stream.on('response', (responseHeaders: IncomingHttpHeaders) => {
      httpStatus = responseHeaders[constants.HTTP2_HEADER_STATUS] as number | undefined;
      if (responseHeaders['grpc-status'] !== undefined) statusHeaders = responseHeaders;
      else headersReceived = true;
    });
    stream.on('trailers', (trailers: IncomingHttpHeaders) => {
      statusHeaders = trailers;
    });
    stream.on('data', (chunk: Buffer) => {
      if (!settled) answer.data(chunk, control);
    });
    stream.on('error', (error: Error) => {
      streamError ??= error;
    });
    // The answer is complete once the readable side ends with a status: settle there, so the caller
    // goes on before node tears the stream down ('close' comes a few ticks later).
    stream.on('end', () => {
      if (settled || statusHeaders === undefined) return;
      cleanup();
      settleWithStatus(statusHeaders);
    });
    stream.on('close', () => {
      session.inflight--;
      if (settled) return;
      cleanup();
      if (statusHeaders !== undefined) settleWithStatus(statusHeaders);
      else reject(endedWithoutStatus());
    });
    const last = call.body.length - 1;
    // Corked (end() uncorks): uncorked, the stream sends the first chunk alone (a forwarded request's
    // 5-byte prefix) and the rest after it is out: two DATA frames, two writev, two segments to the node.
    if (last > 0) stream.cork();
    for (let i = 0; i < last; i++) stream.write(call.body[i]);
    stream.end(call.body[last]);

    function settleWithStatus(status: IncomingHttpHeaders): void {
      try {
        resolve(answer.settle(status, headersReceived));
      } catch (error) {
        reject(error);
      }
    }

    /** No grpc-status arrived: why the stream ended decides the status and whether the node saw the call. */
    function endedWithoutStatus(): UpstreamError {
      const reason =
        session.endReason ?? (streamError?.cause as Error | undefined)?.message ?? streamError?.message ?? (session.h2.destroyed ? 'the connection closed' : 'the stream closed');
      if (!session.connected) return notSent(`No connection established. Last error: ${reason}`, streamError);
      if (stream.id === undefined) return notSent(`the connection ended before the call was sent: ${reason}`, streamError);
      const lastProcessed = session.goawayLastStreamId;
      const refused = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || (lastProcessed !== undefined && stream.id > lastProcessed);
      if (refused && answer.refusedMeansNotSent()) return notSent('Stream refused by server', streamError);
      if (httpStatus !== undefined && httpStatus !== 200) return upstreamError(statusFromHttpStatus(httpStatus), nodeId, false, undefined);
      if (session.h2.destroyed) return upstreamError({ code: GrpcStatus.UNAVAILABLE, details: `Connection dropped: ${reason}` }, nodeId, false, undefined, streamError);
      return upstreamError(statusFromResetCode(stream.rstCode ?? constants.NGHTTP2_NO_ERROR), nodeId, false, undefined, streamError);
    }
  });
}
