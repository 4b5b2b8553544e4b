/**
 * One server-streaming gRPC call on a node's HTTP/2 connection (h2-node-connection.ts): the gateway's
 * upstream ModelStreamInfer for one request of a decoupled model. A POST of one framed request,
 * half-closed at once; the node answers with any number of messages, each handed to `onMessage` as soon
 * as it is complete (nothing is held back until the end), then a `grpc-status` in the trailers.
 *
 * It resolves when the node ends the call with OK, and rejects with an UpstreamError (grpc-errors.ts)
 * otherwise, with the same rules as the unary call (h2-unary-call.ts) for `notAccepted` (never true once
 * a message arrived), for the deadline (enforced here too) and for `signal` (the stream is reset with
 * CANCEL at once, so the model on the node sees its request's AbortSignal). A status the node itself
 * sent after its response headers (a model error, a refused request) comes from its handler, a working
 * node: it is marked `excused` so it does not count against the node's breaker (a stream sends no load
 * trailer, the unary call's sign of the same thing).
 */
import { constants } from 'node:http2';
import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { decodeGrpcMessage, grpcTimeoutHeader } from '../../../../shared/src/grpc/index.js';
import { upstreamError } from './grpc-errors.js';
import type { UpstreamError } from './grpc-errors.js';
import { GrpcMessageSplitter } from './grpc-message-splitter.js';
import { statusFromHttpStatus, statusFromResetCode } from './h2-call-status.js';
import { ConnectBackoff } from './h2-node-connection.js';
import type { NodeConnection, NodeSession } from './h2-node-connection.js';

export interface StreamCall {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** The one request message, framed: one buffer, or the prefix and the message. */
  readonly body: readonly Uint8Array[];
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  readonly signal?: AbortSignal;
  /** Extra request headers (trace context, `triton_grpc_error`); lowercase names. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Largest answer message accepted; larger ones fail RESOURCE_EXHAUSTED. */
  readonly maxReceiveBytes: number;
  /** Each message as it arrives; a throw fails the call with that error and resets the stream. */
  onMessage(message: Buffer): void;
}

/** setTimeout fires at once for longer delays; a deadline that far away needs no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export function streamCall(connection: NodeConnection, nodeId: string, call: StreamCall): Promise<void> {
  return new Promise<void>((resolve, reject) => {
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
      session = connection.session();
      stream = session.h2.request(headers);
    } catch (error) {
      reject(error instanceof ConnectBackoff ? notSent(error.message) : notSent(`the call could not be started: ${(error as Error).message}`, error));
      return;
    }
    session.inflight++;
    session.calls++;

    const splitter = new GrpcMessageSplitter(call.maxReceiveBytes);
    let settled = false;
    let headersReceived = false;
    let messagesReceived = 0;
    let httpStatus: number | undefined;
    let statusHeaders: IncomingHttpHeaders | undefined;
    let streamError: Error | undefined;
    let timer: NodeJS.Timeout | undefined;

    const cleanup = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    const failLocally = (error: unknown): void => {
      if (settled) return;
      cleanup();
      reject(error);
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    const onAbort = (): void => failLocally(upstreamError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, nodeId, false, undefined));
    const onDeadline = (): void => failLocally(upstreamError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }, nodeId, false, undefined));
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
      let messages: Buffer[];
      try {
        messages = splitter.push(chunk);
      } catch (error) {
        failLocally(upstreamError({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: (error as Error).message }, nodeId, false, undefined));
        return;
      }
      for (const message of messages) {
        messagesReceived++;
        try {
          call.onMessage(message);
        } catch (error) {
          failLocally(error);
          return;
        }
        if (settled) return;
      }
    });
    stream.on('error', (error: Error) => {
      streamError ??= error;
    });
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
      if (code === GrpcStatus.OK) {
        if (splitter.midMessage) reject(upstreamError({ code: GrpcStatus.INTERNAL, details: 'the stream ended inside a message' }, nodeId, false, undefined));
        else resolve();
        return;
      }
      const details = decodeGrpcMessage(status['grpc-message']);
      const error = upstreamError({ code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details }, nodeId, false, undefined);
      // The node's handler answered (headers first, then this status): a working node, whatever the error.
      reject(headersReceived ? Object.assign(error, { excused: true }) : error);
    }

    function endedWithoutStatus(): UpstreamError {
      const reason =
        session.endReason ?? (streamError?.cause as Error | undefined)?.message ?? streamError?.message ?? (session.h2.destroyed ? 'the connection closed' : 'the stream closed');
      if (!session.connected) return notSent(`No connection established. Last error: ${reason}`, streamError);
      if (stream.id === undefined) return notSent(`the connection ended before the call was sent: ${reason}`, streamError);
      const lastProcessed = session.goawayLastStreamId;
      const refused = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || (lastProcessed !== undefined && stream.id > lastProcessed);
      if (refused && messagesReceived === 0) return notSent('Stream refused by server', streamError);
      if (httpStatus !== undefined && httpStatus !== 200) return upstreamError(statusFromHttpStatus(httpStatus), nodeId, false, undefined);
      if (session.h2.destroyed) return upstreamError({ code: GrpcStatus.UNAVAILABLE, details: `Connection dropped: ${reason}` }, nodeId, false, undefined, streamError);
      return upstreamError(statusFromResetCode(stream.rstCode ?? constants.NGHTTP2_NO_ERROR), nodeId, false, undefined, streamError);
    }
  });
}
