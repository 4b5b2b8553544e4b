/**
 * Unary gRPC calls answered on their HTTP/2 stream (the raw front's, shared/src/http/raw-http2) by the
 * logic grpc-js's handlers run, instead of relayed to grpc-js on loopback. Around the logic, what
 * grpc-js's unary handling does: the message decoded with the method's protobuf-es schema (undecodable:
 * INVALID_ARGUMENT, before any logic runs), anything thrown answered with the status `failureOf` maps it
 * to, the answer encoded, size-checked and sent with status OK and its trailing metadata. Framing, the
 * receive limit and the deadline are serveH2Unary's.
 *
 * The node's raw front (gpu-node/src/server/grpc/in-place-unary.ts) and the gateway's raw gRPC port
 * (gateway/src/adapters/grpc-front/in-place-front.ts) both build their tables on it.
 *
 * Why: a relayed call pays a second HTTP/2 hop through node:http2 to grpc-js (issue 18: ServerLive
 * 458 → 171 µs of node CPU in place; issue 17: 1.33x gateway CPU on a relayed ServerLive).
 *
 * Declined (left to the caller's relay): methods not in the table, a content type that is not gRPC, a
 * compressed request, an unreadable `grpc-timeout`, and a call the method's `accepts` refuses.
 */
import { toBinary, type DescMessage, type DescMethod, type MessageShape } from '@bufbuild/protobuf';
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus, grpcStatusOf, toTesseraError } from '../errors/index.js';
import { frameGrpcMessage } from './grpc-frame.js';
import { grpcTimeoutMs } from './grpc-timeout.js';
import type { StreamTaker } from './grpc-js-internals.js';
import { isPlainUnaryCall, serveH2Unary, type H2Metadata, type H2UnaryCall, type UnaryStream } from './h2-unary-call.js';
import { decodeMessage } from './service-definition.js';

/** A method's answer: the response message and its trailing metadata. */
export interface InPlaceAnswer {
  readonly response: unknown;
  readonly trailers?: H2Metadata;
}

/** A status to end the call with. */
export interface InPlaceFailure {
  readonly code: number;
  readonly details: string;
  readonly metadata?: H2Metadata;
}

/** What the method's logic sees of the call beside its message. */
export interface InPlaceCall {
  readonly headers: IncomingHttpHeaders;
  /** When the call arrived plus its `grpc-timeout` (Infinity without one), as grpc-js's deadline. */
  readonly deadlineAt: number;
  /** Aborts on the client's reset or the deadline. */
  readonly h2: H2UnaryCall;
}

export interface InPlaceMethod {
  readonly input: DescMessage;
  readonly output: DescMessage;
  readonly run: (request: never, call: InPlaceCall) => InPlaceAnswer | Promise<InPlaceAnswer>;
  /** false leaves the call to grpc-js (the node's restricted calls without their metadata). */
  readonly accepts?: (headers: IncomingHttpHeaders) => boolean;
}

export interface InPlaceUnaryOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  /** A thrown error's status (default: the TesseraError's mapped code and message). */
  readonly failureOf?: (error: unknown) => InPlaceFailure;
}

/** `/package.Service/Method`, the path a call of `method` arrives on. */
export function grpcMethodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** A taker that serves the methods of `methods` (by path) in place and declines every other stream. */
export function inPlaceUnaryTaker(methods: ReadonlyMap<string, InPlaceMethod>, options: InPlaceUnaryOptions): StreamTaker<UnaryStream> {
  const failureOf = options.failureOf ?? tesseraFailure;
  return (stream, headers) => {
    const path = headers[':path'];
    const method = typeof path === 'string' ? methods.get(path) : undefined;
    if (method === undefined || !isPlainUnaryCall(headers, path as string)) return false;
    if (method.accepts !== undefined && !method.accepts(headers)) return false;
    const timeoutMs = grpcTimeoutMs(headers['grpc-timeout']);
    if (timeoutMs === undefined) return false;
    const deadlineAt = Date.now() + timeoutMs;
    serveH2Unary(stream, { path: path as string, maxReceiveBytes: options.maxReceiveBytes, timeoutMs }, (message, h2) => {
      void answer(method, message, { headers, deadlineAt, h2 }, options.maxSendBytes, failureOf);
    });
    return true;
  };
}

async function answer(method: InPlaceMethod, message: Buffer, call: InPlaceCall, maxSendBytes: number, failureOf: (error: unknown) => InPlaceFailure): Promise<void> {
  let encoded: Uint8Array;
  let trailers: H2Metadata;
  try {
    const request = decodeMessage(method.input, message);
    const answered = await method.run(request as never, call);
    encoded = toBinary(method.output, answered.response as MessageShape<DescMessage>);
    trailers = answered.trailers ?? NO_METADATA;
  } catch (error) {
    const failure = failureOf(error);
    call.h2.fail(failure.code, failure.details, failure.metadata);
    return;
  }
  if (encoded.length > maxSendBytes) {
    call.h2.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${encoded.length} vs. ${maxSendBytes})`);
    return;
  }
  call.h2.reply([frameGrpcMessage(encoded)], NO_METADATA, trailers);
}

const NO_METADATA: H2Metadata = Object.freeze({});

function tesseraFailure(error: unknown): InPlaceFailure {
  const tessera = toTesseraError(error);
  return { code: grpcStatusOf(tessera.code), details: tessera.message };
}

/** The first taker that takes the stream; false when none does. */
export function firstTaker(...takers: readonly StreamTaker<UnaryStream>[]): StreamTaker<UnaryStream> {
  return (stream, headers) => {
    for (const take of takers) if (take(stream, headers)) return true;
    return false;
  };
}
