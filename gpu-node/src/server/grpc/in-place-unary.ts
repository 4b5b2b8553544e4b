/**
 * The unary RPCs other than ModelInfer (ServerLive/Ready, ModelReady, metadata, config, statistics,
 * repository calls, the unimplemented shared-memory/trace/log calls, health Check) answered on the raw
 * front's stream (raw-h2-front.ts) instead of relayed to grpc-js. The logic is the one grpc-js's handlers
 * run (inferenceUnaryLogic, healthUnaryLogic); around it, what grpc-js's `unary` wrapper does: the message
 * decoded with the method's protobuf-es schema (undecodable: INVALID_ARGUMENT), anything thrown answered
 * with its mapped status, the answer encoded and sent with status OK. Framing, size limit and deadline are
 * serveH2Unary's, as for the ModelInfer fast path.
 *
 * Why: a relayed call pays a second HTTP/2 hop through node:http2 to grpc-js (ServerLive ~0.3 ms slower at
 * c=1 than on grpc-js's own port; docs/benchmarks.md, issue 18, 2026-11-27d).
 *
 * Declined (relayed to grpc-js, which answers as before): unknown methods, ModelStreamInfer, a content
 * type that is not gRPC, compressed requests, an unreadable `grpc-timeout`, and a call of a restricted
 * category without its metadata (restricted-calls.ts refuses it there, in one place).
 */
import { toBinary, type DescMessage, type DescMethod, type MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import {
  decodeMessage,
  frameGrpcMessage,
  grpcTimeoutMs,
  isPlainUnaryCall,
  serveH2Unary,
  type H2UnaryCall,
  type StreamTaker,
  type UnaryStream,
} from '../../../../shared/src/grpc/index.js';
import { allowedBy, type RestrictedCategory, type Restriction, type Restrictions } from '../restricted-apis.js';
import type { PlainLogic } from './unary.js';

/** One service's unary logic by method local name, and each method's restricted category. */
export interface InPlaceService {
  readonly service: GenService<GenServiceMethods>;
  readonly logic: Readonly<Record<string, PlainLogic<never, unknown>>>;
  readonly categories: Readonly<Record<string, RestrictedCategory>>;
}

export interface InPlaceUnaryOptions {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
  readonly restrictions: Restrictions;
}

interface InPlaceMethod {
  readonly path: string;
  readonly input: DescMessage;
  readonly output: DescMessage;
  readonly logic: PlainLogic<never, unknown>;
  readonly restriction: Restriction | undefined;
}

/** A taker that serves every unary method of `services` with logic, and declines the rest. */
export function inPlaceUnary(services: readonly InPlaceService[], options: InPlaceUnaryOptions): StreamTaker<UnaryStream> {
  const methods = new Map<string, InPlaceMethod>();
  for (const { service, logic, categories } of services) {
    for (const method of service.methods) {
      const run = logic[method.localName];
      if (run === undefined || method.methodKind !== 'unary') continue;
      const category = categories[method.localName];
      methods.set(pathOf(method), {
        path: pathOf(method),
        input: method.input,
        output: method.output,
        logic: run,
        restriction: category === undefined ? undefined : options.restrictions.get(category),
      });
    }
  }
  return (stream, headers) => {
    const path = headers[':path'];
    const method = typeof path === 'string' ? methods.get(path) : undefined;
    if (method === undefined || !isPlainUnaryCall(headers, method.path)) return false;
    if (method.restriction !== undefined && !allowedBy(method.restriction, headers[method.restriction.header])) return false;
    const timeoutMs = grpcTimeoutMs(headers['grpc-timeout']);
    if (timeoutMs === undefined) return false;
    const call = { path: method.path, maxReceiveBytes: options.maxReceiveBytes, timeoutMs };
    serveH2Unary(stream, call, (message, h2) => void answer(method, message, h2, options.maxSendBytes));
    return true;
  };
}

async function answer(method: InPlaceMethod, message: Buffer, call: H2UnaryCall, maxSendBytes: number): Promise<void> {
  let encoded: Uint8Array;
  try {
    const request = decodeMessage(method.input, message);
    const response = await method.logic(request as never);
    encoded = toBinary(method.output, response as MessageShape<DescMessage>);
  } catch (error) {
    const tessera = toTesseraError(error);
    call.fail(grpcStatusOf(tessera.code), tessera.message);
    return;
  }
  if (encoded.length > maxSendBytes) {
    call.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${encoded.length} vs. ${maxSendBytes})`);
    return;
  }
  call.reply([frameGrpcMessage(encoded)], NO_METADATA, NO_METADATA);
}

const NO_METADATA = Object.freeze({});

function pathOf(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** The first taker that takes the stream; false when none does. */
export function firstTaker(...takers: readonly StreamTaker<UnaryStream>[]): StreamTaker<UnaryStream> {
  return (stream, headers: IncomingHttpHeaders) => {
    for (const take of takers) if (take(stream, headers)) return true;
    return false;
  };
}
