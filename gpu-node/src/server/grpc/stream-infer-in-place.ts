/**
 * ModelStreamInfer served on the raw HTTP/2 front's stream (raw-h2-front.ts) by the node's own stream
 * handler (infer-handlers.ts: in-order answers, decoupled responses as the model sends them,
 * `triton_final_response`, empty finals, in-band errors or `triton_grpc_error` statuses), through
 * RawBidiCall instead of a relay to grpc-js on loopback.
 *
 * Why: relayed, every response crossed a second HTTP/2 hop through node:http2 and grpc-js (126 vs 117 µs
 * of the node per response; docs/benchmarks.md, issue 18, 2026-11-27e), which kept `--grpc-raw-h2` off.
 *
 * Declined (relayed to grpc-js, which answers as before): a content type that is not gRPC, a compressed
 * stream (`grpc-encoding` other than identity), an unreadable `grpc-timeout`, and a stream of a
 * restricted category without its metadata (restricted-calls.ts refuses it there, in one place).
 */
import type { MethodDefinition } from '@grpc/grpc-js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { grpcTimeoutMs, isPlainUnaryCall, serverServiceDefinition, type Incoming } from '../../../../shared/src/grpc/index.js';
import type { RawStreamTaker } from '../../../../shared/src/http/raw-http2/index.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import type { StreamInferCall } from './infer-handlers.js';
import { RawBidiCall } from './raw-bidi-call.js';

export const MODEL_STREAM_INFER_PATH = `/${GRPCInferenceService.typeName}/${GRPCInferenceService.method.modelStreamInfer.name}`;

export interface StreamInferInPlaceOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  /** --grpc-restricted-protocol's inference restriction: a stream without its metadata is left to grpc-js, which refuses it. */
  readonly restriction?: Restriction | undefined;
}

/** A raw-front taker for ModelStreamInfer; `handler` is the one grpc-js serves the method with. */
export function streamInferInPlace(handler: (call: StreamInferCall) => void, options: StreamInferInPlaceOptions): RawStreamTaker {
  const method = serverServiceDefinition(GRPCInferenceService).modelStreamInfer as MethodDefinition<Incoming<ModelInferRequest>, ModelStreamInferResponse>;
  return (stream, headers) => {
    // isPlainUnaryCall's checks are the method's, not unary ones: POST, gRPC content type, no compression.
    if (!isPlainUnaryCall(headers, MODEL_STREAM_INFER_PATH)) return false;
    if (options.restriction !== undefined && !allowedBy(options.restriction, headers[options.restriction.header])) return false;
    const timeoutMs = grpcTimeoutMs(headers['grpc-timeout']);
    if (timeoutMs === undefined) return false;
    handler(new RawBidiCall(stream, headers, method, { maxReceiveBytes: options.maxReceiveBytes, maxSendBytes: options.maxSendBytes, timeoutMs }));
    return true;
  };
}
