/**
 * The unary RPCs other than ModelInfer (ServerLive/Ready, ModelReady, metadata, config, statistics,
 * repository calls, the unimplemented shared-memory/trace/log calls, health Check) answered on the raw
 * front's stream (raw-h2-front.ts) instead of relayed to grpc-js. The logic is the one grpc-js's handlers
 * run (inferenceUnaryLogic, healthUnaryLogic); around it, what grpc-js's `unary` wrapper does: the message
 * decoded with the method's protobuf-es schema (undecodable: INVALID_ARGUMENT), anything thrown answered
 * with its mapped status, the answer encoded and sent with status OK. Framing, size limit and deadline are
 * serveH2Unary's, as for the ModelInfer fast path. The generic part is shared/src/grpc/in-place-unary.ts
 * (the gateway's raw gRPC port runs it too); this file builds the node's table.
 *
 * Why: a relayed call pays a second HTTP/2 hop through node:http2 to grpc-js (ServerLive ~0.3 ms slower at
 * c=1 than on grpc-js's own port; docs/benchmarks.md, issue 18, 2026-11-27d).
 *
 * Declined (relayed to grpc-js, which answers as before): unknown methods, ModelStreamInfer, a content
 * type that is not gRPC, compressed requests, an unreadable `grpc-timeout`, and a call of a restricted
 * category without its metadata (restricted-calls.ts refuses it there, in one place).
 */
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  grpcMethodPath,
  inPlaceUnaryTaker,
  type InPlaceMethod,
  type StreamTaker,
  type UnaryStream,
} from '../../../../shared/src/grpc/index.js';
import { allowedBy, type RestrictedCategory, type Restrictions } from '../restricted-apis.js';
import type { PlainLogic } from './unary.js';

export { firstTaker } from '../../../../shared/src/grpc/index.js';

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

/** A taker that serves every unary method of `services` with logic (shared/src/grpc/in-place-unary.ts), and declines the rest. */
export function inPlaceUnary(services: readonly InPlaceService[], options: InPlaceUnaryOptions): StreamTaker<UnaryStream> {
  const methods = new Map<string, InPlaceMethod>();
  for (const { service, logic, categories } of services) {
    for (const method of service.methods) {
      const run = logic[method.localName];
      if (run === undefined || method.methodKind !== 'unary') continue;
      const category = categories[method.localName];
      const restriction = category === undefined ? undefined : options.restrictions.get(category);
      methods.set(grpcMethodPath(method), {
        input: method.input,
        output: method.output,
        run: async (request: never) => ({ response: await run(request) }),
        ...(restriction === undefined ? {} : { accepts: (headers) => allowedBy(restriction, headers[restriction.header]) }),
      });
    }
  }
  return inPlaceUnaryTaker(methods, options);
}
