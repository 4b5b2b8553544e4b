/**
 * The gateway's unary RPCs other than ModelInfer served in place on the raw HTTP/2 port (`grpcRawH2`):
 * the logic grpc-js's handlers run (unary-front.ts), called by the shared in-place adapter
 * (shared/src/grpc/in-place-unary.ts) with the stream's headers read as grpc-js reads metadata
 * (h2StreamHeaders) and the deadline taken from `grpc-timeout` when the call arrived. Statuses, messages
 * and trailing metadata are the grpc-js handlers' (the gateway's gRPC suites run on both ports).
 *
 * Why: relayed to grpc-js, each such call paid a second HTTP/2 hop on loopback (1.33x the gateway's CPU
 * on ServerLive at c=1; docs/benchmarks.md, issue 17, 2026-11-27e).
 */
import type { DescMethod } from '@bufbuild/protobuf';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import { Health } from '../../../../shared/src/gen/health_pb.js';
import { GrpcStatus, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import {
  grpcMethodPath,
  inPlaceUnaryTaker,
  type InPlaceCall,
  type InPlaceFailure,
  type InPlaceMethod,
  type StreamTaker,
  type UnaryStream,
} from '../../../../shared/src/grpc/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { h2StreamHeaders } from './call-bridge.js';
import { Answered, healthUnaryFrontLogic, inferenceUnaryFrontLogic, type RouteApp, type UnaryFrontLogic } from './unary-front.js';

export interface InPlaceFrontOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  readonly logger?: Logger | undefined;
}

/** A taker serving every unary RPC of the inference and health services but ModelInfer; it declines the rest. */
export function inPlaceFrontUnary(app: RouteApp, options: InPlaceFrontOptions): StreamTaker<UnaryStream> {
  const methods = new Map<string, InPlaceMethod>();
  const add = (descs: readonly DescMethod[], table: Record<string, UnaryFrontLogic>): void => {
    for (const method of descs) {
      const logic = table[method.localName];
      if (logic === undefined || method.methodKind !== 'unary') continue;
      methods.set(grpcMethodPath(method), { input: method.input, output: method.output, run: (request: never, call: InPlaceCall) => run(logic, request, call) });
    }
  };
  add(GRPCInferenceService.methods, inferenceUnaryFrontLogic(app));
  add(Health.methods, healthUnaryFrontLogic(app));
  const logger = options.logger;
  const failureOf = (error: unknown): InPlaceFailure => {
    if (error instanceof Answered) return { code: error.code, details: error.message, metadata: error.trailer };
    const tessera = toTesseraError(error);
    const code = grpcStatusOf(tessera.code);
    if (code === GrpcStatus.INTERNAL) logger?.error('gRPC front door: unexpected failure', { error: String(error) });
    return { code, details: tessera.message };
  };
  return inPlaceUnaryTaker(methods, { maxReceiveBytes: options.maxReceiveBytes, maxSendBytes: options.maxSendBytes, failureOf });
}

async function run(logic: UnaryFrontLogic, request: never, call: InPlaceCall): Promise<{ response: unknown; trailers?: Readonly<Record<string, string>> }> {
  const { response, trailer } = await logic(request, { headers: () => h2StreamHeaders(call.headers, call.deadlineAt), signal: call.h2.signal });
  return trailer === undefined ? { response } : { response, trailers: trailer };
}
