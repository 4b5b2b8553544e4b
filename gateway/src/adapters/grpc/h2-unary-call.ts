/**
 * One unary gRPC call on a node's HTTP/2 connection (h2-node-connection.ts): a POST of one framed
 * message with `te: trailers` and `grpc-timeout`, answered by one message and a `grpc-status` in the
 * trailers, or by a status alone in the response headers (trailers-only: how servers answer errors
 * before any message).
 *
 * It resolves with the answer's message bytes and the node's load from the trailers, or rejects with
 * an UpstreamError (grpc-errors.ts) whose `notAccepted` says exactly whether the node can have seen
 * the call: true when the connection never came up or is in backoff, when the stream was never sent,
 * and when the node refused the stream (RST_STREAM REFUSED_STREAM, or a stream id above a GOAWAY's
 * last stream id). Everything else (a dropped connection mid-call, a reset, any status the node sent)
 * is false: the node may have run the request.
 *
 * The deadline is enforced here too (the node may be hung or unreachable): when it passes, the stream
 * is reset with CANCEL and the call fails DEADLINE_EXCEEDED. Aborting `signal` does the same with
 * CANCELLED, so the node stops working for a client that left.
 */
import { constants } from 'node:http2';
import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { UnaryMessageReader, decodeGrpcMessage, grpcTimeoutHeader } from '../../../../shared/src/grpc/index.js';
import { decodeNodeAnswer, looksNotAccepted, upstreamError } from './grpc-errors.js';
import type { CallStatus, NodeLoad, UpstreamError } from './grpc-errors.js';
import { statusFromHttpStatus, statusFromResetCode } from './h2-call-status.js';
import { ConnectBackoff } from './h2-node-connection.js';
import type { NodeConnection, NodeSession } from './h2-node-connection.js';
import { INFLIGHT_TRAILER, QUEUE_DEPTH_TRAILER, loadFromTrailer } from './load-trailer.js';

export interface UnaryCall {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** The request message, framed (shared/src/grpc/grpc-frame.ts): one buffer, or the prefix and the message. */
  readonly body: readonly Uint8Array[];
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  readonly signal?: AbortSignal;
  /** Extra request headers (W3C trace context); lowercase names. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Largest answer message accepted; larger ones fail RESOURCE_EXHAUSTED. */
  readonly maxReceiveBytes: number;
}

export interface UnaryAnswer {
  readonly message: Buffer;
  readonly load: NodeLoad | undefined;
}

/** setTimeout fires at once for longer delays; a deadline that far away needs no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Opens the stream; a session that refuses a new stream at once (closing under us) is replaced once. */
function openStream(connection: NodeConnection, headers: OutgoingHttpHeaders): { session: NodeSession; stream: ClientHttp2Stream } {
  for (let attempt = 0; ; attempt++) {
    const session = connection.session();
    try {
      return { session, stream: session.h2.request(headers) };
    } catch (error) {
      connection.retire(session);
      if (attempt > 0) throw error;
    }
  }
}

const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function loadOf(headers: IncomingHttpHeaders): NodeLoad | undefined {
  return loadFromTrailer(headerValue(headers[QUEUE_DEPTH_TRAILER]), headerValue(headers[INFLIGHT_TRAILER]));
}

export function unaryCall(connection: NodeConnection, nodeId: string, call: UnaryCall): Promise<UnaryAnswer> {
  return new Promise<UnaryAnswer>((resolve, reject) => {
    const notSent = (details: string, cause?: unknown): UpstreamError =>
      upstreamError({ code: GrpcStatus.UNAVAILABLE, details }, nodeId, true, undefined, cause);
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
      ({ session, stream } = openStream(connection, headers));
    } catch (error) {
      reject(error instanceof ConnectBackoff ? notSent(error.message) : notSent(`the call could not be started: ${(error as Error).message}`, error));
      return;
    }
    session.inflight++;
    session.calls++;

    const reader = new UnaryMessageReader(call.maxReceiveBytes);
    let settled = false;
    /** Response headers without a status: the node started answering. */
    let headersReceived = false;
    let httpStatus: number | undefined;
    /** The headers that carried grpc-status: the trailers, or the headers of a trailers-only answer. */
    let statusHeaders: IncomingHttpHeaders | undefined;
    let streamError: Error | undefined;
    let timer: NodeJS.Timeout | undefined;

    const cleanup = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    /** A failure decided here (deadline, cancellation, oversized answer): reset the stream, stop listening. */
    const failLocally = (error: UpstreamError): void => {
      if (settled) return;
      cleanup();
      reject(error);
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    const onAbort = (): void => failLocally(upstreamError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, nodeId, false, undefined));
    const onDeadline = (): void =>
      failLocally(upstreamError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }, nodeId, false, undefined));
    const remainingMs = call.deadline - Date.now();
    if (remainingMs < MAX_TIMER_MS) timer = setTimeout(onDeadline, Math.max(0, remainingMs));
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
      if (settled) return;
      try {
        reader.push(chunk);
      } catch {
        failLocally(
          upstreamError(
            { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Received message larger than max (${call.maxReceiveBytes} bytes)` },
            nodeId,
            false,
            undefined,
          ),
        );
      }
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
    for (let i = 0; i < last; i++) stream.write(call.body[i]);
    stream.end(call.body[last]);

    function settleWithStatus(status: IncomingHttpHeaders): void {
      const code = Number(headerValue(status['grpc-status']));
      const load = loadOf(status);
      if (code !== GrpcStatus.OK) {
        const callStatus: CallStatus = { code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details: decodeGrpcMessage(status['grpc-message']) };
        reject(upstreamError(callStatus, nodeId, looksNotAccepted(callStatus, headersReceived), load));
        return;
      }
      if (reader.empty) {
        reject(upstreamError({ code: GrpcStatus.UNIMPLEMENTED, details: 'No message received' }, nodeId, false, load));
        return;
      }
      let message: Buffer;
      try {
        message = decodeNodeAnswer(nodeId, () => reader.message());
      } catch (error) {
        reject(error as UpstreamError);
        return;
      }
      resolve({ message, load });
    }

    /** No grpc-status arrived: why the stream ended decides the status and whether the node saw the call. */
    function endedWithoutStatus(): UpstreamError {
      const reason =
        session.endReason ??
        (streamError?.cause as Error | undefined)?.message ??
        streamError?.message ??
        (session.h2.destroyed ? 'the connection closed' : 'the stream closed');
      if (!session.connected) return notSent(`No connection established. Last error: ${reason}`, streamError);
      if (stream.id === undefined) return notSent(`the connection ended before the call was sent: ${reason}`, streamError);
      const lastProcessed = session.goawayLastStreamId;
      if (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || (lastProcessed !== undefined && stream.id > lastProcessed)) {
        return notSent('Stream refused by server', streamError);
      }
      if (httpStatus !== undefined && httpStatus !== 200) return upstreamError(statusFromHttpStatus(httpStatus), nodeId, false, undefined);
      if (session.h2.destroyed) return upstreamError({ code: GrpcStatus.UNAVAILABLE, details: `Connection dropped: ${reason}` }, nodeId, false, undefined, streamError);
      return upstreamError(statusFromResetCode(stream.rstCode ?? constants.NGHTTP2_NO_ERROR), nodeId, false, undefined, streamError);
    }
  });
}
