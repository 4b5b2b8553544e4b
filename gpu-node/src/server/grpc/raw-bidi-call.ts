/**
 * A bidirectional-streaming gRPC call on one raw HTTP/2 front stream (raw-stream.ts), shaped as the part
 * of grpc-js's ServerDuplexStream the node's ModelStreamInfer handler uses (StreamInferCall), so the
 * same handler (infer-handlers.ts) serves the stream in place instead of behind a relay to grpc-js.
 *
 * What grpc-js does, done here: requests decoded by the method's own deserializer as each message
 * completes ('data'), 'end' after the last; `pause()` withholds the DATA credit given back to the peer
 * (so it may send at most one window more) and queues what still arrives, `resume()` hands the queue on
 * and gives the credit back; answers framed and written as the handler writes them, their callbacks run
 * once the bytes have left the stream's queue (UnsentBudget counts on it); `end()` is status OK and an
 * emitted 'error' the error's status, as trailers after the answers or as a trailers-only response; the
 * deadline from `grpc-timeout` answers DEADLINE_EXCEEDED; a reset, the connection's end or our status
 * mark the call cancelled and emit 'cancelled' (after the status, as grpc-js). An oversized message is
 * RESOURCE_EXHAUSTED with grpc-js's words; a message flagged compressed INTERNAL, as the unary fast
 * path answers it (grpc-js reads it as uncompressed).
 */
import { EventEmitter } from 'node:events';
import { Metadata, type MethodDefinition, type ServerErrorResponse } from '@grpc/grpc-js';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { GRPC_PREFIX_BYTES, GrpcMessageReader, grpcMessageHeader, grpcMessagePrefix } from '../../../../shared/src/grpc/index.js';
import type { RawH2Stream, RequestHeaders } from '../../../../shared/src/http/raw-http2/index.js';

export interface RawBidiOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  /** What `grpc-timeout` grants, in ms (Infinity without one). */
  readonly timeoutMs: number;
}

/** Answers at most this large are copied behind their prefix (one DATA frame); larger ones go as a view after it. */
const COPY_ANSWER_BYTES = 16 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
const CONTENT_TYPE = 'application/grpc+proto';
// grpc-js's response headers, so a client sees the same fields on either port.
const RESPONSE_HEADERS = Object.freeze({ ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-accept-encoding': 'identity,deflate,gzip', 'grpc-encoding': 'identity' });
// Removed from the handler's metadata, as grpc-js removes them.
const TRANSPORT_HEADERS = ['grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'accept-encoding', 'te', 'content-type'];

export class RawBidiCall<Request, Response> extends EventEmitter {
  readonly metadata: Metadata;
  cancelled = false;
  private readonly reader: GrpcMessageReader;
  private readonly deadline: number;
  private timer: NodeJS.Timeout | undefined = undefined;
  private paused = false;
  /** Received bytes whose credit is withheld while paused. */
  private owedCredit = 0;
  private remoteEnded = false;
  private endEmitted = false;
  private statusSent = false;
  private cancelNotified = false;
  /** Write callbacks of answers still in the stream's queue (it is waiting for the peer's window). */
  private unsentCallbacks: (() => void)[] = [];

  constructor(
    private readonly stream: RawH2Stream,
    headers: RequestHeaders,
    private readonly method: MethodDefinition<Request, Response>,
    private readonly options: RawBidiOptions,
  ) {
    super();
    this.metadata = Metadata.fromHttp2Headers(headers);
    for (const name of TRANSPORT_HEADERS) this.metadata.remove(name);
    this.reader = new GrpcMessageReader(options.maxReceiveBytes);
    this.deadline = Date.now() + options.timeoutMs;
    // As grpc-js's duplex stream: an emitted error becomes the call's status.
    this.on('error', (error: ServerErrorResponse) => this.sendStatus(error.code ?? GrpcStatus.UNKNOWN, error.details ?? error.message, error.metadata));
    stream.manualCredit = true;
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.on('end', () => this.onEnd());
    stream.on('close', () => this.onClose());
    stream.on('drain', () => this.onDrain());
    if (options.timeoutMs <= 0) process.nextTick(() => this.expire());
    // setTimeout fires at once for delays past 2^31-1 ms; a deadline weeks away needs no timer.
    else if (options.timeoutMs < MAX_TIMER_MS) this.timer = setTimeout(() => this.expire(), options.timeoutMs).unref();
  }

  getDeadline(): number {
    return this.deadline;
  }

  isPaused(): boolean {
    return this.paused;
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    if (!this.paused) return this;
    this.paused = false;
    this.pump();
    return this;
  }

  /** Writes one answer; `callback` runs once it has left the stream's queue. False while it waits for window. */
  write(message: Response, callback?: () => void): boolean {
    if (this.cancelled || this.statusSent) return false;
    let bytes: Buffer;
    try {
      bytes = this.method.responseSerialize(message);
    } catch {
      this.sendStatus(GrpcStatus.INTERNAL, 'Error serializing response');
      return false;
    }
    if (bytes.length > this.options.maxSendBytes) {
      this.sendStatus(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${bytes.length + GRPC_PREFIX_BYTES} vs. ${this.options.maxSendBytes})`);
      return false;
    }
    const stream = this.stream;
    if (!stream.headersSent) stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
    let sent: boolean;
    if (bytes.length <= COPY_ANSWER_BYTES) {
      const framed = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + bytes.length);
      framed[0] = 0;
      framed.writeUInt32BE(bytes.length, 1);
      framed.set(bytes, GRPC_PREFIX_BYTES);
      sent = stream.write(framed);
    } else {
      stream.write(grpcMessagePrefix(bytes.length));
      sent = stream.write(bytes);
    }
    if (callback !== undefined) {
      if (sent) callback();
      else this.unsentCallbacks.push(callback);
    }
    return sent;
  }

  /** Status OK after the answers written so far. */
  end(): void {
    this.sendStatus(GrpcStatus.OK, 'OK');
  }

  private sendStatus(code: number, details: string, metadata?: Metadata): void {
    if (this.cancelled || this.statusSent) return;
    this.statusSent = true;
    clearTimeout(this.timer);
    const status = { ...metadata?.toHttp2Headers(), 'grpc-status': String(code), 'grpc-message': grpcMessageHeader(details) };
    const stream = this.stream;
    if (stream.headersSent) {
      stream.once('wantTrailers', () => stream.sendTrailers(status));
      stream.end();
    } else {
      stream.respond({ ...RESPONSE_HEADERS, ...status }, { endStream: true });
    }
    this.notifyCancelled();
  }

  private expire(): void {
    this.sendStatus(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
  }

  private onData(chunk: Buffer): void {
    if (this.cancelled) {
      this.stream.credit(chunk.length); // read and dropped, as grpc-js does after its status
      return;
    }
    this.reader.push(chunk);
    this.owedCredit += chunk.length;
    if (!this.paused) this.pump();
  }

  /**
   * Hands on the requests that are in until the handler pauses; the bytes' credit goes back only while
   * it reads, so a paused call holds at most one window more (bounded buffering).
   */
  private pump(): void {
    while (!this.paused && !this.cancelled) {
      const next = this.reader.next();
      if (next === undefined) break;
      if (!Buffer.isBuffer(next)) {
        if (next.kind === 'too-large') this.sendStatus(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${next.declared} vs ${this.options.maxReceiveBytes})`);
        else this.sendStatus(GrpcStatus.INTERNAL, 'Received a compressed message without a grpc-encoding header');
        break;
      }
      this.emit('data', this.method.requestDeserialize(next));
    }
    if ((!this.paused || this.cancelled) && this.owedCredit > 0) {
      this.stream.credit(this.owedCredit);
      this.owedCredit = 0;
    }
    this.maybeEmitEnd();
  }

  private onEnd(): void {
    this.remoteEnded = true;
    this.maybeEmitEnd();
  }

  /** 'end' once the peer has ended and every whole message is handed on (a partial one is dropped, as grpc-js does). */
  private maybeEmitEnd(): void {
    // Unpaused, `pump` has handed on every whole message already.
    if (!this.remoteEnded || this.endEmitted || this.paused || this.cancelled) return;
    this.endEmitted = true;
    this.emit('end');
  }

  private onDrain(): void {
    const callbacks = this.unsentCallbacks;
    this.unsentCallbacks = [];
    for (const callback of callbacks) callback();
  }

  private onClose(): void {
    clearTimeout(this.timer);
    this.unsentCallbacks = [];
    this.notifyCancelled();
  }

  /** Cancelled from now on; 'cancelled' once, on the next tick (grpc-js tells its handler so, also after a status). */
  private notifyCancelled(): void {
    if (this.cancelNotified) return;
    this.cancelNotified = true;
    this.cancelled = true;
    process.nextTick(() => this.emit('cancelled'));
  }
}
