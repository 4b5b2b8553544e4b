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
  type ClientStreamHandler,
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
  return new Promise<T>((resolve, reject) => new UpstreamCall(connection, nodeId, call, answer, resolve, reject).start());
}

/**
 * One call's state, its stream's handler and its answer's control in one object: methods on the prototype
 * instead of a dozen closures and three objects per call (as the front's UnaryCall, shared/src/grpc/h2-unary-call.ts).
 */
class UpstreamCall<T> implements ClientStreamHandler, CallControl {
  settled = false;
  private headersReceived = false;
  private httpStatus: number | undefined = undefined;
  /** The headers that carried grpc-status: the trailers, or the headers of a trailers-only answer. */
  private statusHeaders: ResponseFields | undefined = undefined;
  private deadline: DeadlineEntry | undefined = undefined;
  /** Whether `abortedByClient` listens to the call's signal. */
  private listening = false;
  private session!: NodeSession;
  private stream!: RawH2ClientStream;

  constructor(
    private readonly connection: NodeConnection,
    private readonly nodeId: string,
    private readonly call: H2Call,
    private readonly answer: AnswerHandling<T>,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(): void {
    const { call, connection } = this;
    const request = requestBlock(connection.address, call.path, GRPC_FIELDS, 'grpc-timeout', grpcTimeoutHeader(call.deadline - Date.now()), call.metadata);
    for (let attempt = 0; ; attempt++) {
      try {
        this.session = connection.session();
        this.stream = this.session.client.request(request, call.body, this);
        break;
      } catch (error) {
        if (error instanceof ConnectBackoff) return this.reject(this.notSent(error.message));
        // A connection closing under us (GOAWAY just read) is replaced once when the call allows it.
        if (error instanceof RawH2ClientRefusal && this.answer.reopenClosingSession && attempt === 0) {
          connection.retire(this.session);
          continue;
        }
        return this.reject(this.notSent(`the call could not be started: ${(error as Error).message}`, error));
      }
    }
    this.session.inflight++;
    if (call.deadline - Date.now() < MAX_TIMER_MS) this.deadline = deadlines.add(call.deadline, this.expire);
    const signal = call.signal;
    if (signal !== undefined) {
      this.listening = true;
      signal.addEventListener('abort', this.abortedByClient, { once: true });
      if (signal.aborted) this.abortedByClient();
    }
  }

  /** Ends the call here with `error`: the stream is reset (CANCEL). */
  fail(error: unknown): void {
    if (this.settled) return;
    this.cleanup();
    this.reject(error);
    this.session.client.reset(this.stream, H2Error.CANCEL);
  }

  // The stream's handler.

  headers(fields: ResponseFields): void {
    this.httpStatus = Number(fields[':status']);
    if (fields['grpc-status'] !== undefined) this.statusHeaders = fields;
    else this.headersReceived = true;
  }

  data(chunk: Buffer): void {
    if (!this.settled) this.answer.data(chunk, this);
  }

  trailers(fields: ResponseFields): void {
    this.statusHeaders = fields;
  }

  close(end: ClientStreamEnd): void {
    this.session.inflight--;
    if (this.settled) return;
    this.cleanup();
    if (this.statusHeaders === undefined) return this.reject(this.endedWithoutStatus(end));
    try {
      this.resolve(this.answer.settle(this.statusHeaders as IncomingHttpHeaders, this.headersReceived));
    } catch (error) {
      this.reject(error);
    }
  }

  /**
   * A property made with the call, as `expire`, not an arrow made in start(): made there, it kept every miss's
   * objects alive through each minor collection until the next full one (about 5 KB promoted per gRPC miss, minor
   * GC 14-35 µs per miss against 2.5-4 µs with this; located by experiment, docs/benchmarks.md issue 17, 2026-11-28b).
   */
  private readonly abortedByClient = (): void => this.fail(upstreamError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, this.nodeId, false, undefined));

  // A property, not a method: the deadline heap calls it as a plain function.
  private readonly expire = (): void => this.fail(upstreamError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }, this.nodeId, false, undefined));

  private cleanup(): void {
    this.settled = true;
    if (this.deadline !== undefined) deadlines.cancel(this.deadline);
    if (this.listening) this.call.signal?.removeEventListener('abort', this.abortedByClient);
  }

  private notSent(details: string, cause?: unknown): UpstreamError {
    return upstreamError({ code: GrpcStatus.UNAVAILABLE, details }, this.nodeId, true, undefined, cause);
  }

  /** No grpc-status arrived: how the stream ended decides the status and whether the node saw the call. */
  private endedWithoutStatus(end: ClientStreamEnd): UpstreamError {
    const { session, nodeId } = this;
    const reason = session.endReason ?? end.reason;
    if (!session.connected) return this.notSent(`No connection established. Last error: ${reason}`);
    if (!end.sent) return this.notSent(`the connection ended before the call was sent: ${reason}`);
    if (end.refused && this.answer.refusedMeansNotSent()) return this.notSent('Stream refused by server');
    if (this.httpStatus !== undefined && this.httpStatus !== 200) return upstreamError(statusFromHttpStatus(this.httpStatus), nodeId, false, undefined);
    if (end.by === 'connection') return upstreamError({ code: GrpcStatus.UNAVAILABLE, details: `Connection dropped: ${end.reason}` }, nodeId, false, undefined);
    if (end.by === 'local') return upstreamError({ code: GrpcStatus.INTERNAL, details: end.reason }, nodeId, false, undefined);
    return upstreamError(statusFromResetCode(end.code), nodeId, false, undefined);
  }
}
