/**
 * The lifecycle every gRPC call to a node shares, unary or streamed, on the node's connection
 * (h2-node-connection.ts, our own HTTP/2 client): a POST of the framed request with `te: trailers` and
 * `grpc-timeout`, half-closed once sent; the deadline and `signal` enforced here (the stream is reset
 * with CANCEL; DEADLINE_EXCEEDED / CANCELLED); the status read from the trailers or a trailers-only
 * answer; and, when no status came, how the stream ended, which decides the status and `notAccepted`
 * (true only when the node cannot have seen the call). The client says exactly how a stream ended
 * (client-stream.ts's ClientStreamEnd): never sent, refused (REFUSED_STREAM or above a GOAWAY's last
 * id), reset by the node, broken by the node (a protocol error found here: INTERNAL naming it), or
 * dropped with the connection. What a call does with the answer's bytes and its status is the caller's
 * (h2-unary-call.ts, h2-stream-call.ts).
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { grpcTimeoutHeader } from '../../../../shared/src/grpc/index.js';
import {
  H2Error,
  RawH2ClientRefusal,
  requestBlock,
  type ClientStreamEnd,
  type RawH2ClientStream,
  type ResponseFields,
} from '../../../../shared/src/http/raw-http2/index.js';
import { upstreamError, type UpstreamError } from './grpc-errors.js';
import { CallDeadlines, type DeadlineEntry } from './h2-call-deadlines.js';
import { statusFromHttpStatus, statusFromResetCode } from './h2-call-status.js';
import { ConnectBackoff, type NodeConnection, type NodeSession } from './h2-node-connection.js';
import type { CancelSignal } from '../../core/http/index.js';

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
  /** A connection refusing a new stream at once (closing under us) is replaced once. */
  readonly reopenClosingSession: boolean;
}

/** setTimeout fires at once for longer delays; a deadline that far away needs no timer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Every call's deadline on one timer (h2-call-deadlines.ts says why). */
export const deadlines = new CallDeadlines();

export const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** The same for every gRPC call; encoded once per node and path with the pseudo-headers. */
const GRPC_FIELDS = { 'content-type': 'application/grpc', te: 'trailers' } as const;

export function h2Call<T>(connection: NodeConnection, nodeId: string, call: H2Call, answer: AnswerHandling<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const notSent = (details: string, cause?: unknown): UpstreamError => upstreamError({ code: GrpcStatus.UNAVAILABLE, details }, nodeId, true, undefined, cause);
    const request = requestBlock(connection.address, call.path, GRPC_FIELDS, { ...call.metadata, 'grpc-timeout': grpcTimeoutHeader(call.deadline - Date.now()) });

    let settled = false;
    let headersReceived = false;
    let httpStatus: number | undefined;
    /** The headers that carried grpc-status: the trailers, or the headers of a trailers-only answer. */
    let statusHeaders: ResponseFields | undefined;
    let deadline: DeadlineEntry | undefined;
    let session: NodeSession;
    let stream: RawH2ClientStream;

    const cleanup = (): void => {
      settled = true;
      if (deadline !== undefined) deadlines.cancel(deadline);
      call.signal?.removeEventListener('abort', onAbort);
    };
    const failLocally = (error: unknown): void => {
      if (settled) return;
      cleanup();
      reject(error);
      session.client.reset(stream, H2Error.CANCEL);
    };
    const control: CallControl = {
      fail: failLocally,
      get settled() {
        return settled;
      },
    };
    const onAbort = (): void => failLocally(upstreamError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, nodeId, false, undefined));
    const onDeadline = (): void => failLocally(upstreamError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }, nodeId, false, undefined));

    const handler = {
      headers(fields: ResponseFields): void {
        httpStatus = Number(fields[':status']);
        if (fields['grpc-status'] !== undefined) statusHeaders = fields;
        else headersReceived = true;
      },
      data(chunk: Buffer): void {
        if (!settled) answer.data(chunk, control);
      },
      trailers(fields: ResponseFields): void {
        statusHeaders = fields;
      },
      close(end: ClientStreamEnd): void {
        session.inflight--;
        if (settled) return;
        cleanup();
        if (statusHeaders !== undefined) settleWithStatus(statusHeaders);
        else reject(endedWithoutStatus(end));
      },
    };

    for (let attempt = 0; ; attempt++) {
      try {
        session = connection.session();
        stream = session.client.request(request, call.body, handler);
        break;
      } catch (error) {
        if (error instanceof ConnectBackoff) return reject(notSent(error.message));
        // A connection closing under us (GOAWAY just read) is replaced once when the call allows it.
        if (error instanceof RawH2ClientRefusal && answer.reopenClosingSession && attempt === 0) {
          connection.retire(session!);
          continue;
        }
        return reject(notSent(`the call could not be started: ${(error as Error).message}`, error));
      }
    }
    session.inflight++;
    if (call.deadline - Date.now() < MAX_TIMER_MS) deadline = deadlines.add(call.deadline, onDeadline);
    call.signal?.addEventListener('abort', onAbort, { once: true });
    if (call.signal?.aborted) onAbort();

    function settleWithStatus(status: ResponseFields): void {
      try {
        resolve(answer.settle(status as IncomingHttpHeaders, headersReceived));
      } catch (error) {
        reject(error);
      }
    }

    /** No grpc-status arrived: how the stream ended decides the status and whether the node saw the call. */
    function endedWithoutStatus(end: ClientStreamEnd): UpstreamError {
      const reason = session.endReason ?? end.reason;
      if (!session.connected) return notSent(`No connection established. Last error: ${reason}`);
      if (!end.sent) return notSent(`the connection ended before the call was sent: ${reason}`);
      if (end.refused && answer.refusedMeansNotSent()) return notSent('Stream refused by server');
      if (httpStatus !== undefined && httpStatus !== 200) return upstreamError(statusFromHttpStatus(httpStatus), nodeId, false, undefined);
      if (end.by === 'connection') return upstreamError({ code: GrpcStatus.UNAVAILABLE, details: `Connection dropped: ${end.reason}` }, nodeId, false, undefined);
      if (end.by === 'local') return upstreamError({ code: GrpcStatus.INTERNAL, details: end.reason }, nodeId, false, undefined);
      return upstreamError(statusFromResetCode(end.code), nodeId, false, undefined);
    }
  });
}
