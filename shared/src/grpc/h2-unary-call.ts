/**
 * One unary gRPC call served straight on its HTTP/2 stream, ahead of grpc-js (grpc-js-internals.ts):
 * the request body read within the receive limit, the one message cut out of it, the deadline from
 * `grpc-timeout` kept with a timer, a client reset turned into an abort, and the answer written as
 * grpc-js writes it (a trailers-only status, or headers, the message and trailers). The node's and the
 * gateway's ModelInfer fast paths are built on it; each decides which streams it takes and what the
 * message means.
 *
 * Statuses are grpc-js's where grpc-js has them (no message, two messages, too large, deadline). Two
 * framings differ, both on the gRPC spec's side: a truncated message is INTERNAL (grpc-js: UNIMPLEMENTED,
 * "no request message"), and a message flagged compressed without a `grpc-encoding` is refused INTERNAL
 * (grpc-js reads it as uncompressed).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { GrpcStatus, TesseraError } from '../errors/index.js';
import { GRPC_PREFIX_BYTES, cutUnaryMessage, type UnaryFramingProblem } from './grpc-frame.js';
import { grpcTimeoutMs } from './grpc-timeout.js';

/**
 * The part of a server stream a unary call uses: node:http2's UnaryStream, or the raw HTTP/2
 * front's stream (shared/src/http/raw-http2/raw-stream.ts).
 */
export interface UnaryStream {
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  readonly closed: boolean;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'close' | 'end' | 'wantTrailers' | 'error', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  resume(): unknown;
  respond(headers: OutgoingHttpHeaders, options: { endStream?: boolean; waitForTrailers?: boolean }): void;
  sendTrailers(headers: OutgoingHttpHeaders): void;
  cork(): void;
  write(chunk: Uint8Array): boolean;
  end(chunk: Uint8Array): unknown;
  /**
   * The raw front's stream (raw-stream.ts) tells one receiver of its events directly: the call then adds no
   * listener closures. node:http2's streams have no such method and get listeners.
   */
  attach?(sink: UnaryStreamSink): void;
}

/** What an `attach`ing stream tells: the call itself (the raw front's StreamSink has this shape). */
export interface UnaryStreamSink {
  onStreamData(chunk: Buffer): void;
  onStreamEnd(): void;
  onStreamClose(): void;
  onWantTrailers(): void;
}

/** Told of a call's abort: an object with a method, as an EventTarget listener may be. */
export interface AbortHandler {
  handleEvent(): void;
}

/** The part of AbortSignal a listener for the call's end uses: an AbortSignal's shape, so either serves. */
export interface H2CallWatch {
  readonly aborted: boolean;
  /** The abort's TesseraError (DEADLINE_EXCEEDED or CANCELLED) once aborted. */
  readonly reason: unknown;
  /** As AbortSignal's: called once when the call aborts; one added after that is not called (read `aborted`). */
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** An abort handler or a watch's listener: both are told when the call aborts. */
type AbortListener = AbortHandler | (() => void);

/** Metadata written as HTTP/2 headers or trailers (lower-case text keys). */
export type H2Metadata = Readonly<Record<string, string>>;

export interface H2UnaryOptions {
  /** The method's path, named in grpc-js's framing messages. */
  readonly path: string;
  readonly maxReceiveBytes: number;
  /** What `grpc-timeout` grants (grpcTimeoutMs): Infinity without one. */
  readonly timeoutMs: number;
  /** Metadata every failed status carries (the node's load figures), read when the status is written. */
  readonly failureMetadata?: () => H2Metadata;
}

export interface H2UnaryCall {
  /**
   * Aborts when the deadline passes (DEADLINE_EXCEEDED) or the client resets the stream (CANCELLED).
   * Made on first read (already aborted when that came first): a call that never hands it on (the
   * gateway's cache hit) makes no AbortController.
   */
  readonly signal: AbortSignal;
  /** Whether `signal` has aborted (or would have); reading it makes no signal. */
  readonly aborted: boolean;
  /** What `signal` aborts (or would abort) with: a TesseraError, CANCELLED or DEADLINE_EXCEEDED. */
  readonly reason: unknown;
  /**
   * `handler.handleEvent()` once when the call aborts, unless removed first; makes no signal (the node's
   * scheduler watches a queued request this way). Not for a call already aborted.
   */
  addAbortHandler(handler: AbortHandler): void;
  removeAbortHandler(handler: AbortHandler): void;
  /**
   * The same cancellation as an AbortSignal's shape, without one: the call itself (its listeners are
   * told with the abort handlers). What the gateway's miss listens to (its CancelSignal,
   * gateway/src/core/http/cancellation.ts), so a gRPC miss makes no AbortController.
   */
  readonly watch: H2CallWatch;
  /** Whether a status was written or the stream went away: nothing more will be sent. */
  readonly answered: boolean;
  /** Ends the call with a trailers-only status (unless it already ended). */
  fail(code: number, details: string, metadata?: H2Metadata): void;
  /** Ends the call with one framed message (`chunks`, written in order) and status OK. */
  reply(chunks: readonly Uint8Array[], headers: H2Metadata, trailers: H2Metadata): void;
}

const MAX_TIMER_MS = 2 ** 31 - 1;
/** A reset this close to the deadline is the client's deadline, not a cancel (as the node's callSignal reads it). */
const DEADLINE_SLACK_MS = 100;
const CONTENT_TYPE = 'application/grpc+proto';

/** Whether grpc-js would take `headers` as a gRPC call (its content types). */
export function isGrpcContentType(value: string | undefined): boolean {
  return value === 'application/grpc' || value === 'application/grpc+proto';
}

/** No compression asked for: the fast paths leave compressed requests to grpc-js. */
export function isIdentityEncoding(value: string | string[] | undefined): boolean {
  return value === undefined || value === 'identity';
}

/** A POST of a gRPC content type without compression to `path`: what the fast paths may take. */
export function isPlainUnaryCall(headers: IncomingHttpHeaders, path: string): boolean {
  return headers[':path'] === path && headers[':method'] === 'POST' && isGrpcContentType(headers['content-type']) && isIdentityEncoding(headers['grpc-encoding']);
}

/** The message limits of a unary fast path (the gateway's front door, the node's ModelInfer). */
export interface UnaryFastPathLimits {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
}

/**
 * A plain unary call to `path` (POST, gRPC content-type, no compression) with a `grpc-timeout` that can be
 * read: its timeout in ms (Infinity without one). Undefined: not one a fast path takes; grpc-js answers it.
 */
export function plainUnaryTimeoutMs(headers: IncomingHttpHeaders, path: string): number | undefined {
  return isPlainUnaryCall(headers, path) ? grpcTimeoutMs(headers['grpc-timeout']) : undefined;
}

/**
 * Serves `stream` as a unary call: `onMessage` gets the one request message and the call, and must end
 * it with `fail` or `reply`. Framing problems, an oversized body and the deadline are answered here.
 */
export function serveH2Unary(stream: UnaryStream, options: H2UnaryOptions, onMessage: (message: Buffer, call: H2UnaryCall) => void): void {
  // An 'error' with no listener would throw; every error is followed by 'close', which cancels. The raw
  // front's stream emits none.
  if (stream.attach === undefined) stream.on('error', ignore);
  const call = new UnaryCall(stream, options, onMessage);
  const { timeoutMs } = options;
  if (timeoutMs <= 0) {
    call.expire();
    return;
  }
  // setTimeout fires at once for delays past 2^31-1 ms; a deadline weeks away needs no timer.
  if (timeoutMs < MAX_TIMER_MS) call.timer = setTimeout(expireCall, timeoutMs, call).unref();
  // The raw front's stream tells the call itself: no closures, no listener entries.
  if (stream.attach !== undefined) stream.attach(call);
  else listenTo(stream, call);
}

/** node:http2's stream: the call's listeners. `on`, not `once`: each fires once anyway, and `once` wraps every listener in another closure. */
function listenTo(stream: UnaryStream, call: UnaryCall): void {
  const onData = (chunk: Buffer): void => call.onStreamData(chunk);
  call.dataListener = onData;
  stream.on('close', () => call.onStreamClose());
  stream.on('data', onData);
  stream.on('end', () => call.onStreamEnd());
}

/** An OK answer's headers: one frozen object, so the raw front encodes its block once (hpack-encoder.ts). */
const REPLY_HEADERS = Object.freeze({ ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-encoding': 'identity' });
const WAIT_FOR_TRAILERS = Object.freeze({ waitForTrailers: true });
const OK_TRAILER = Object.freeze({ 'grpc-status': '0' });

type Fields = Readonly<Record<string, string | number>>;
/** Reply headers and OK trailers made from frozen metadata (a gateway's `x-cache: MISS`), frozen in turn: their blocks are encoded once. */
const madeReplyHeaders = new WeakMap<Fields, Fields>();
const madeOkTrailers = new WeakMap<Fields, Fields>();

/** `metadata` with `fields` over it: a new object per call, or for frozen metadata one frozen object made once. */
function withFields(made: WeakMap<Fields, Fields>, metadata: Fields, fields: Fields): Fields {
  if (!Object.isFrozen(metadata)) return { ...metadata, ...fields };
  let out = made.get(metadata);
  if (out === undefined) {
    out = Object.freeze({ ...metadata, ...fields });
    made.set(metadata, out);
  }
  return out;
}

function hasFields(metadata: H2Metadata): boolean {
  for (const _ in metadata) return true;
  return false;
}

const ignore = (): void => undefined;
const EMPTY_BODY = Buffer.alloc(0);
const expireCall = (call: UnaryCall): void => call.expire();

/**
 * One call's state and its answers in one object: methods on the prototype instead of a dozen
 * closures per call (the gateway's cache hit is GC-bound: docs/benchmarks.md, issue 17, 2026-11-26d).
 */
class UnaryCall implements H2UnaryCall, H2CallWatch, UnaryStreamSink {
  readonly watch: H2CallWatch = this;
  timer: NodeJS.Timeout | undefined = undefined;
  /** node:http2's 'data' listener (listenTo), taken off past the size limit; undefined on an attaching stream. */
  dataListener: ((chunk: Buffer) => void) | undefined = undefined;
  /** Set past the size limit: the rest of the body is dropped, not kept. */
  private dropping = false;
  private controller: AbortController | undefined = undefined;
  private abortReason: TesseraError | undefined = undefined;
  /** The first abort handler, and any further ones: one watcher (the node's batcher) is the rule. */
  private abortHandler: AbortListener | undefined = undefined;
  private moreAbortHandlers: AbortListener[] | undefined = undefined;
  private done = false;
  private readonly deadline: number;
  /** The body's first chunk, and the rest only when there are more (most requests come in one). */
  private first: Buffer | undefined = undefined;
  private more: Buffer[] | undefined = undefined;
  private received = 0;
  private trailers: H2Metadata | undefined = undefined;

  constructor(
    private readonly stream: UnaryStream,
    private readonly options: H2UnaryOptions,
    private readonly onMessage: (message: Buffer, call: H2UnaryCall) => void,
  ) {
    this.deadline = Date.now() + options.timeoutMs;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  get reason(): unknown {
    return this.abortReason;
  }

  addAbortHandler(handler: AbortListener): void {
    if (this.abortHandler === undefined) this.abortHandler = handler;
    else (this.moreAbortHandlers ??= []).push(handler);
  }

  removeAbortHandler(handler: AbortListener): void {
    if (this.abortHandler === handler) this.abortHandler = undefined;
    else if (this.moreAbortHandlers !== undefined) {
      const at = this.moreAbortHandlers.indexOf(handler);
      if (at >= 0) this.moreAbortHandlers.splice(at, 1);
    }
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    // As AbortSignal's: a listener added after the abort is not called.
    if (this.abortReason === undefined) this.addAbortHandler(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.removeAbortHandler(listener);
  }

  get answered(): boolean {
    return this.done;
  }

  fail(code: number, details: string, metadata?: H2Metadata): void {
    if (this.done) return;
    this.finish();
    const stream = this.stream;
    if (stream.headersSent) return;
    const status = { ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-status': String(code), 'grpc-message': grpcMessageHeader(details) };
    writeUnlessGone(stream, () => stream.respond({ ...this.options.failureMetadata?.(), ...metadata, ...status }, { endStream: true }));
  }

  reply(chunks: readonly Uint8Array[], headers: H2Metadata, trailers: H2Metadata): void {
    if (this.done) return;
    this.finish();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    this.trailers = trailers;
    try {
      stream.respond(hasFields(headers) ? withFields(madeReplyHeaders, headers, REPLY_HEADERS) : REPLY_HEADERS, WAIT_FOR_TRAILERS);
      if (stream.attach === undefined) stream.on('wantTrailers', () => this.onWantTrailers());
      // One write for a small answer; a large output goes uncopied after the bytes before it. Corked
      // (end() uncorks): uncorked, the stream sends the first chunk alone and the rest only once it is
      // out, so the answer left as two DATA frames in two segments, and a waiting client woke twice.
      if (chunks.length > 1) stream.cork();
      for (let i = 0; i < chunks.length - 1; i++) stream.write(chunks[i]!);
      stream.end(chunks[chunks.length - 1]!);
    } catch {
      // The stream closed under us: nothing more to send.
    }
  }

  expire(): void {
    this.abort(TesseraError.deadlineExceeded('the request deadline passed'));
    this.fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
  }

  onStreamClose(): void {
    if (this.done) return;
    this.finish();
    this.abort(
      Date.now() >= this.deadline - DEADLINE_SLACK_MS
        ? TesseraError.deadlineExceeded('the request deadline passed')
        : TesseraError.cancelled('the client cancelled the request'),
    );
  }

  onStreamData(chunk: Buffer): void {
    // Past the limit, or answered already (the deadline passed mid-body): the rest is not kept.
    if (this.dropping || this.done) return;
    const options = this.options;
    this.received += chunk.length;
    const received = this.received;
    // The prefix's declared length when it has arrived whole in the first chunk: grpc-js refuses on it, before the message comes.
    const first = this.first ?? chunk;
    const declared = first.length >= GRPC_PREFIX_BYTES ? first.readUInt32BE(1) : received - GRPC_PREFIX_BYTES;
    if (declared > options.maxReceiveBytes || received > options.maxReceiveBytes + GRPC_PREFIX_BYTES) {
      this.dropping = true;
      if (this.dataListener !== undefined) this.stream.off('data', this.dataListener);
      const size = declared > options.maxReceiveBytes ? declared : received - GRPC_PREFIX_BYTES;
      // grpc-js's words, "vs" without a dot (its send-side message has one).
      this.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${size} vs ${options.maxReceiveBytes})`);
      // The rest of the body is read and dropped, so the stream closes cleanly.
      this.stream.resume();
      return;
    }
    if (this.first === undefined) this.first = chunk;
    else (this.more ??= []).push(chunk);
  }

  onStreamEnd(): void {
    if (this.done) return;
    const { first, more } = this;
    const body = first === undefined ? EMPTY_BODY : more === undefined ? first : Buffer.concat([first, ...more], this.received);
    const cut = cutUnaryMessage(body);
    if ('problem' in cut) {
      const { code, details } = framingStatus(cut.problem, this.options.path);
      this.fail(code, details);
      return;
    }
    this.onMessage(cut.message, this);
  }

  onWantTrailers(): void {
    writeUnlessGone(this.stream, () => this.stream.sendTrailers(withFields(madeOkTrailers, this.trailers ?? {}, OK_TRAILER)));
  }

  private abort(reason: TesseraError): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const first = this.abortHandler;
    const more = this.moreAbortHandlers;
    this.abortHandler = undefined;
    this.moreAbortHandlers = undefined;
    if (first !== undefined) tellAbort(first);
    if (more !== undefined) for (const handler of more) tellAbort(handler);
  }

  private finish(): void {
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

function tellAbort(handler: AbortListener): void {
  try {
    if (typeof handler === 'function') handler();
    else handler.handleEvent();
  } catch (error) {
    // As EventTarget does with a throwing listener: reported as uncaught, the other handlers still run.
    process.nextTick(() => {
      throw error;
    });
  }
}

function writeUnlessGone(stream: UnaryStream, write: () => void): void {
  if (stream.destroyed || stream.closed) return;
  try {
    write();
  } catch {
    // The stream closed under us: see above.
  }
}

/** `grpc-message` is percent-encoded (gRPC over HTTP/2); encodeURI throws on a lone surrogate, so those become U+FFFD first. */
export function grpcMessageHeader(details: string): string {
  try {
    return encodeURI(details);
  } catch {
    return encodeURI(details.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
  }
}

/** A request's framing problem as a status: grpc-js's code and words where grpc-js has them. */
function framingStatus(problem: UnaryFramingProblem, path: string): { code: number; details: string } {
  switch (problem.kind) {
    case 'no-message':
      return { code: GrpcStatus.UNIMPLEMENTED, details: `Received no request message for unary method ${path}` };
    case 'short-prefix':
      return { code: GrpcStatus.INTERNAL, details: `The request ends inside a message prefix (${problem.bytes} bytes)` };
    case 'compressed':
      return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without a grpc-encoding header' };
    case 'truncated':
      return { code: GrpcStatus.INTERNAL, details: `The request message is truncated: ${problem.received} of ${problem.declared} bytes` };
    case 'extra-message':
      return { code: GrpcStatus.UNIMPLEMENTED, details: `Received a second request message for unary method ${path}` };
  }
}
