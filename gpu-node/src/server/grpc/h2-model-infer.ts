/**
 * ModelInfer served straight on the HTTP/2 stream, ahead of grpc-js (grpc-js-internals.ts routes the
 * stream here first). Same decoding, same `core.infer`, same answer and trailing load headers as the
 * grpc-js handler (infer-handlers.ts), without grpc-js's per-call machinery: interceptor chain,
 * Metadata objects, message decoder and call objects, and its headers, message and trailers written
 * in separate turns.
 *
 * Why: at one request in flight the node answered a gRPC ModelInfer 0.25 ms later than the same
 * request over its HTTP fast path (0.72 vs 0.47 ms round trip, lean clients), and every request
 * through a gateway takes that path (docs/benchmarks.md, "Where the gateway's added latency goes").
 *
 * It takes only the plain case and leaves the stream to grpc-js otherwise, so grpc-js still answers
 * everything it answered before: another method, a content-type that is not gRPC, a compressed
 * request (`grpc-encoding` other than identity), a `grpc-timeout` it cannot parse.
 * Statuses are grpc-js's where the call fails before our logic (no message, two messages, message too
 * large, deadline), and the handler's (toServiceError) after it. Two framings differ, both on the
 * gRPC spec's side: a truncated message is INTERNAL (grpc-js: UNIMPLEMENTED, "no request message"),
 * and a message flagged compressed without a `grpc-encoding` is refused INTERNAL (grpc-js reads it
 * as uncompressed). h2-model-infer.test.ts sends each case to both and compares.
 *
 * Left out: grpc-js's per-stream idle tracking (`grpc.max_connection_idle_ms`, which the node does
 * not set) and channelz call counts (channelz is off).
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { GrpcStatus, TesseraError, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import {
  GRPC_PREFIX_BYTES,
  cutUnaryMessage,
  decodeModelInferRequest,
  encodeInferResponseFramed,
  grpcTimeoutMs,
  inferRequestFromProto,
  type EncodedInferResponse,
  type UnaryFramingProblem,
} from '../../../../shared/src/grpc/index.js';
import { TRACEPARENT_HEADER } from '../../../../shared/src/tracing/index.js';
import type { NodeCore } from '../../server-api/index.js';
import type { StreamTaker } from './grpc-js-internals.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import { GRPC_DECOUPLED_REFUSAL, loadTrailerValues, traceParentFrom } from './infer-handlers.js';

export const MODEL_INFER_PATH = `/${GRPCInferenceService.typeName}/${GRPCInferenceService.method.modelInfer.name}`;

const MAX_TIMER_MS = 2 ** 31 - 1;
/** As callSignal (call-status.ts): a reset this close to the deadline is the client's deadline. */
const DEADLINE_SLACK_MS = 100;

export interface ModelInferFastPathOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  /** --grpc-restricted-protocol's inference restriction: a call without its metadata is left to grpc-js, which refuses it. */
  readonly restriction?: Restriction | undefined;
}

function isGrpcContentType(value: string | undefined): boolean {
  return value === 'application/grpc' || value === 'application/grpc+proto';
}

function isIdentityEncoding(value: string | string[] | undefined): boolean {
  return value === undefined || value === 'identity';
}

export function modelInferFastPath(core: NodeCore, options: ModelInferFastPathOptions): StreamTaker {
  return (stream, headers) => {
    if (headers[':path'] !== MODEL_INFER_PATH || headers[':method'] !== 'POST') return false;
    if (!isGrpcContentType(headers['content-type']) || !isIdentityEncoding(headers['grpc-encoding'])) return false;
    if (options.restriction !== undefined && !allowedBy(options.restriction, headers[options.restriction.header])) return false;
    const timeout = grpcTimeoutMs(headers['grpc-timeout']);
    if (timeout === undefined) return false;
    serve(core, options, stream, headers, timeout);
    return true;
  };
}

function serve(core: NodeCore, options: ModelInferFastPathOptions, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, timeout: number): void {
  // An 'error' with no listener would throw; every error is followed by 'close', which cancels.
  stream.on('error', ignore);
  const call = new ModelInferCall(core, options, stream, headers, Date.now() + timeout);
  if (timeout <= 0) {
    call.expire();
    return;
  }
  // setTimeout fires at once for delays past 2^31-1 ms; a deadline weeks away needs no timer.
  if (timeout < MAX_TIMER_MS) call.timer = setTimeout(() => call.expire(), timeout).unref();
  stream.once('close', () => call.closed());
  const onData = (chunk: Buffer): void => {
    if (!call.received(chunk)) stream.off('data', onData);
  };
  stream.on('data', onData);
  stream.once('end', () => call.ended());
}

const ignore = (): void => undefined;

/** The answer's headers; http2 copies them on respond, so one object serves every call. */
const ANSWER_HEADERS = Object.freeze({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-encoding': 'identity' });
const ANSWER_OPTIONS = Object.freeze({ waitForTrailers: true });
const FAILURE_OPTIONS = Object.freeze({ endStream: true });

/**
 * One ModelInfer on its stream: its state and steps as fields and methods, so a call costs one object
 * and the four stream listeners rather than a closure per step.
 */
class ModelInferCall {
  readonly controller = new AbortController();
  timer: NodeJS.Timeout | undefined;
  private model = '';
  private answered = false;
  private first: Buffer | undefined;
  private more: Buffer[] | undefined;
  private receivedBytes = 0;

  constructor(
    private readonly core: NodeCore,
    private readonly options: ModelInferFastPathOptions,
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly deadline: number,
  ) {}

  expire(): void {
    this.controller.abort(TesseraError.deadlineExceeded('the request deadline passed'));
    this.fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
  }

  closed(): void {
    if (this.answered) return;
    this.finish();
    this.controller.abort(
      Date.now() >= this.deadline - DEADLINE_SLACK_MS
        ? TesseraError.deadlineExceeded('the request deadline passed')
        : TesseraError.cancelled('the client cancelled the request'),
    );
  }

  /** Keeps `chunk`; false once the message is over the limit (the call is failed, the rest is dropped). */
  received(chunk: Buffer): boolean {
    this.receivedBytes += chunk.length;
    if (this.receivedBytes > this.options.maxReceiveBytes + GRPC_PREFIX_BYTES) {
      this.first = undefined;
      this.more = undefined;
      this.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${this.receivedBytes - GRPC_PREFIX_BYTES} vs. ${this.options.maxReceiveBytes})`);
      // The rest of the body is read and dropped, so the stream closes cleanly.
      this.stream.resume();
      return false;
    }
    if (this.first === undefined) this.first = chunk;
    else (this.more ??= [this.first]).push(chunk);
    return true;
  }

  ended(): void {
    if (this.answered) return;
    const body = this.more !== undefined ? Buffer.concat(this.more, this.receivedBytes) : (this.first ?? EMPTY);
    const cut = cutUnaryMessage(body);
    if ('problem' in cut) {
      const { code, details } = framingStatus(cut.problem);
      this.fail(code, details);
      return;
    }
    void this.run(cut.message);
  }

  private finish(): void {
    this.answered = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private fail(code: number, details: string): void {
    if (this.answered) return;
    this.finish();
    const stream = this.stream;
    if (stream.headersSent) return;
    const headers = { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-status': String(code), 'grpc-message': grpcMessageHeader(details), ...loadTrailerValues(this.core, this.model) };
    writeUnlessGone(stream, () => stream.respond(headers, FAILURE_OPTIONS));
  }

  private async run(message: Buffer): Promise<void> {
    let answer: EncodedInferResponse;
    try {
      const msg = decodeModelInferRequest(message);
      this.model = msg.modelName;
      // Trace headers are read only when a traceparent came: an untraced call makes no reader closure.
      const traced = this.headers[TRACEPARENT_HEADER] === undefined ? undefined : traceParentFrom((name) => firstHeader(this.headers, name)).traceParent;
      const signal = this.controller.signal;
      const response = await this.core.infer(
        inferRequestFromProto(msg),
        traced === undefined ? { signal, decoupledRefusal: GRPC_DECOUPLED_REFUSAL } : { signal, decoupledRefusal: GRPC_DECOUPLED_REFUSAL, traceParent: traced },
      );
      answer = encodeInferResponseFramed(response);
    } catch (error) {
      const tessera = toTesseraError(error);
      this.fail(grpcStatusOf(tessera.code), tessera.message);
      return;
    }
    if (answer.messageBytes > this.options.maxSendBytes) {
      this.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${answer.messageBytes} vs. ${this.options.maxSendBytes})`);
      return;
    }
    if (this.answered) return;
    this.finish();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    const trailers = { 'grpc-status': '0', ...loadTrailerValues(this.core, this.model) };
    try {
      stream.respond(ANSWER_HEADERS, ANSWER_OPTIONS);
      stream.once('wantTrailers', () => writeUnlessGone(stream, () => stream.sendTrailers(trailers)));
      // One write for a small answer; a large output goes uncopied after the bytes before it.
      const { chunks } = answer;
      for (let i = 0; i < chunks.length - 1; i++) stream.write(chunks[i]);
      stream.end(chunks[chunks.length - 1]);
    } catch {
      // The stream closed under us: see writeUnlessGone.
    }
  }
}

const EMPTY = Buffer.alloc(0);

function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Runs `write` unless the stream is gone. A client can reset the stream after our last look and before
 * its 'close' event: http2 then throws (ERR_HTTP2_INVALID_STREAM), from a timer or a promise callback
 * where it would end the process. Nobody is left to answer, so the throw is dropped.
 */
function writeUnlessGone(stream: ServerHttp2Stream, write: () => void): void {
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
function framingStatus(problem: UnaryFramingProblem): { code: number; details: string } {
  switch (problem.kind) {
    case 'no-message':
      return { code: GrpcStatus.UNIMPLEMENTED, details: `Received no request message for unary method ${MODEL_INFER_PATH}` };
    case 'short-prefix':
      return { code: GrpcStatus.INTERNAL, details: `The request ends inside a message prefix (${problem.bytes} bytes)` };
    case 'compressed':
      return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without a grpc-encoding header' };
    case 'truncated':
      return { code: GrpcStatus.INTERNAL, details: `The request message is truncated: ${problem.received} of ${problem.declared} bytes` };
    case 'extra-message':
      return { code: GrpcStatus.UNIMPLEMENTED, details: `Received a second request message for unary method ${MODEL_INFER_PATH}` };
  }
}
