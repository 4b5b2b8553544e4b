/**
 * One HTTP/2 stream of the raw front, shaped as the part of node:http2's ServerHttp2Stream a unary call
 * (shared/src/grpc/h2-unary-call.ts) and the relay (relay.ts) use: 'data', 'end', 'close', 'drain' and
 * 'wantTrailers' events, `respond`, `write`, `end`, `sendTrailers`, `close(code)`. The connection owns
 * framing, flow control and the stream's state (RFC 9113 §5.1); this holds what one stream needs.
 */
import { EventEmitter } from 'node:events';
import type { OutgoingFields } from './hpack-encoder.js';

/** What a stream asks of its connection. */
export interface StreamOwner {
  sendHeaders(stream: RawH2Stream, fields: OutgoingFields, endStream: boolean): void;
  /** Queues DATA; false when it waits for the peer's window (a 'drain' follows). */
  sendData(stream: RawH2Stream, chunk: Uint8Array, endStream: boolean): boolean;
  /** RST_STREAM from our side. */
  reset(stream: RawH2Stream, code: number): void;
  /** Gives `bytes` of received DATA back to the peer's windows (WINDOW_UPDATE when enough has built up). */
  credit(stream: RawH2Stream, bytes: number): void;
}

/** Queued output: a header block or DATA, in order; DATA waits for window. */
export interface Outbound {
  readonly headers?: Buffer;
  data?: Uint8Array;
  readonly end: boolean;
}

/**
 * A unary call's receiver of its stream's events (shared/src/grpc/h2-unary-call.ts): one object with
 * methods, told directly, instead of four listener closures and four EventEmitter entries per call.
 */
export interface StreamSink {
  onStreamData(chunk: Buffer): void;
  onStreamEnd(): void;
  onStreamClose(): void;
  onWantTrailers(): void;
}

export class RawH2Stream extends EventEmitter {
  headersSent = false;
  /** END_STREAM or RST either way: nothing more will be read or written. */
  closed = false;
  /** The RST_STREAM code that closed it, 0 when it ended normally. */
  rstCode = 0;
  /** END_STREAM received. */
  remoteEnded = false;
  /** END_STREAM queued. */
  localEnded = false;
  /** The relay gives received DATA back itself, once it has passed it on (`credit`); otherwise on delivery. */
  manualCredit = false;
  /** What the peer lets us send on this stream. */
  sendWindow: number;
  /** DATA received on this stream not yet given back with a WINDOW_UPDATE. */
  uncredited = 0;
  /** DATA the peer may still send before we give credit back. */
  receiveWindow: number;
  readonly outbound: Outbound[] = [];
  /** When its output started waiting for window (0: not waiting): a window that never opens ends it. */
  blockedSince = 0;
  private waitForTrailers = false;
  /** Told of data, end, close and wantTrailers ahead of any listeners (`attach`). */
  private sink: StreamSink | undefined = undefined;

  constructor(
    readonly id: number,
    private readonly owner: StreamOwner,
    sendWindow: number,
    receiveWindow: number,
  ) {
    super();
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  /** Tells `sink` of this stream's events from now on (listeners added with `on` are still told after it). */
  attach(sink: StreamSink): void {
    this.sink = sink;
  }

  /** The connection's delivery of a DATA frame's body. */
  deliverData(chunk: Buffer): void {
    this.sink?.onStreamData(chunk);
    this.emit('data', chunk);
  }

  /** The connection's delivery of END_STREAM. */
  deliverEnd(): void {
    this.sink?.onStreamEnd();
    this.emit('end');
  }

  /** The connection's delivery of the stream's close (either way); the sink is let go. */
  deliverClose(): void {
    const sink = this.sink;
    this.sink = undefined;
    sink?.onStreamClose();
    this.emit('close');
  }

  get destroyed(): boolean {
    return this.closed;
  }

  respond(fields: OutgoingFields, options: { readonly endStream?: boolean; readonly waitForTrailers?: boolean } = {}): void {
    if (this.headersSent) throw new Error('headers already sent');
    if (this.closed) return;
    this.headersSent = true;
    this.waitForTrailers = options.waitForTrailers === true;
    this.owner.sendHeaders(this, fields, options.endStream === true);
  }

  write(chunk: Uint8Array): boolean {
    if (this.closed || this.localEnded) return false;
    return this.owner.sendData(this, chunk, false);
  }

  /** The last DATA (if any); then trailers when `respond` asked to wait for them ('wantTrailers'), else END_STREAM. */
  end(chunk?: Uint8Array): void {
    if (this.closed || this.localEnded) return;
    if (chunk !== undefined && chunk.length > 0) this.owner.sendData(this, chunk, false);
    if (this.waitForTrailers) {
      this.sink?.onWantTrailers();
      this.emit('wantTrailers');
    }
    else this.owner.sendData(this, EMPTY, true);
  }

  /** Trailers and END_STREAM; with no fields, an empty DATA frame ends the stream instead. */
  sendTrailers(fields: OutgoingFields): void {
    if (this.closed || this.localEnded) return;
    if (Object.keys(fields).length === 0) this.owner.sendData(this, EMPTY, true);
    else this.owner.sendHeaders(this, fields, true);
  }

  /** Resets the stream with `code` (CANCEL by default). */
  close(code = 0x8): void {
    if (!this.closed) this.owner.reset(this, code);
  }

  /** Gives back received DATA when `manualCredit` is set. */
  credit(bytes: number): void {
    if (!this.closed) this.owner.credit(this, bytes);
  }

  // What node:http2 streams have and the unary call calls; no-ops here (the connection corks each turn).
  cork(): void {}
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
}

const EMPTY = new Uint8Array(0);
