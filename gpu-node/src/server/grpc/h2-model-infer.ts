/**
 * ModelInfer served straight on the HTTP/2 stream, ahead of grpc-js (shared/src/grpc/grpc-js-internals.ts
 * routes the stream here first; shared/src/grpc/h2-unary-call.ts reads the call and writes its answer). Same decoding, same `core.infer`, same answer and trailing load headers as the
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
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import { GRPCInferenceService, type ModelInferRequest } from '../../../../shared/src/gen/grpc_service_pb.js';
import {
  decodeModelInferRequest,
  inferRequestFromProto,
  plainUnaryTimeoutMs,
  readPlainInferRequest,
  serveH2Unary,
  type EncodedInferResponse,
  type H2Metadata,
  type H2UnaryCall,
  type H2UnaryOptions,
  type StreamTaker,
  type UnaryFastPathLimits,
  type UnaryStream,
} from '../../../../shared/src/grpc/index.js';
import { TRACEPARENT_HEADER } from '../../../../shared/src/tracing/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import { AnswerHeadMemo } from './answer-head-memo.js';
import { GRPC_DECOUPLED_REFUSAL, loadTrailerValues, traceParentFrom } from './infer-handlers.js';

export const MODEL_INFER_PATH = `/${GRPCInferenceService.typeName}/${GRPCInferenceService.method.modelInfer.name}`;

/**
 * Outputs of this many bytes or more go out as views of the batch's output after the bytes before them,
 * not copied into the answer's own buffer: a wave of 64 mlp_large answers made 64 buffers of 4 KB each,
 * too large for Node's shared slab (under 4 KiB), and that external memory drove V8's mark-compacts.
 * Smaller outputs are copied (the head then stays on the slab and the answer is one chunk).
 */
export const OUTPUT_VIEW_BYTES = 1024;

export interface ModelInferFastPathOptions extends UnaryFastPathLimits {
  /** --grpc-restricted-protocol's inference restriction: a call without its metadata is left to grpc-js, which refuses it. */
  readonly restriction?: Restriction | undefined;
}

/** Takes a node:http2 stream (grpc-js's server) or a raw front stream (raw-h2-front.ts) alike. */
export function modelInferFastPath(core: NodeCore, options: ModelInferFastPathOptions): StreamTaker<UnaryStream> {
  const heads = new AnswerHeadMemo(OUTPUT_VIEW_BYTES);
  return (stream, headers) => {
    const timeoutMs = plainUnaryTimeoutMs(headers, MODEL_INFER_PATH);
    if (timeoutMs === undefined) return false;
    if (options.restriction !== undefined && !allowedBy(options.restriction, headers[options.restriction.header])) return false;
    const infer = new FastModelInfer(core, options, headers, timeoutMs, heads);
    serveH2Unary(stream, infer, (message, call) => void infer.run(message, call));
    return true;
  };
}

/**
 * One call's state in one object that is also its H2UnaryOptions: the failure metadata is a method
 * reading the model it named, not an options object, a closure and a setter closure per call.
 */
class FastModelInfer implements H2UnaryOptions {
  readonly path = MODEL_INFER_PATH;
  readonly maxReceiveBytes: number;
  private model = '';

  constructor(
    private readonly core: NodeCore,
    private readonly fastPath: ModelInferFastPathOptions,
    private readonly headers: IncomingHttpHeaders,
    readonly timeoutMs: number,
    private readonly heads: AnswerHeadMemo,
  ) {
    this.maxReceiveBytes = fastPath.maxReceiveBytes;
  }

  failureMetadata(): H2Metadata {
    return loadTrailerValues(this.core, this.model);
  }

  /** The reference decode; the model is known (for the failure's load trailers) before its checks run. */
  private decoded(message: Buffer): ModelInferRequest {
    const msg = decodeModelInferRequest(message);
    this.model = msg.modelName;
    return msg;
  }

  async run(message: Buffer, call: H2UnaryCall): Promise<void> {
    const { core, headers } = this;
    let answer: EncodedInferResponse;
    try {
      // A plain request is read and checked in one pass into the request (no proto-shaped message); any
      // other, or one a check refuses, goes protobuf's way, whose checks name the error as they always have.
      const plain = readPlainInferRequest(message);
      const request = plain?.request ?? inferRequestFromProto(this.decoded(message));
      this.model = request.modelName;
      // Trace headers are read only when a traceparent came: an untraced call makes no reader closure.
      const traced = headers[TRACEPARENT_HEADER] === undefined ? undefined : traceParentFrom((name) => firstHeader(headers, name)).traceParent;
      // The call itself is the cancellation: no AbortController unless a backend reads a signal (call-cancellation.ts).
      const signal = call;
      const response = await core.infer(
        request,
        traced === undefined ? { signal, decoupledRefusal: GRPC_DECOUPLED_REFUSAL } : { signal, decoupledRefusal: GRPC_DECOUPLED_REFUSAL, traceParent: traced },
      );
      answer = this.heads.encode(response);
    } catch (error) {
      const tessera = toTesseraError(error);
      call.fail(grpcStatusOf(tessera.code), tessera.message);
      return;
    }
    if (answer.messageBytes > this.fastPath.maxSendBytes) {
      call.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${answer.messageBytes} vs. ${this.fastPath.maxSendBytes})`);
      return;
    }
    call.reply(answer.chunks, NO_HEADERS, loadTrailerValues(core, this.model));
  }
}

const NO_HEADERS: H2Metadata = Object.freeze({});

function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
