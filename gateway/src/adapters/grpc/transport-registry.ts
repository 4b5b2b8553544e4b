/**
 * The gRPC transports by name, as the config's `grpcTransport` picks them: `http2` (h2-transport.ts,
 * the default) and `grpc-js` (grpc-transport.ts, on @grpc/grpc-js, kept as a fallback). Both take
 * the options they share; each documents its own defaults.
 */
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { FleetChangeSource } from '../../core/ports/index.js';
import { createGrpcTransport } from './grpc-transport.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport } from './h2-transport.js';
import type { NodeBreakerOptions, NodeBreakers } from './node-breakers.js';

export interface SharedTransportOptions {
  readonly logger?: Logger;
  readonly fleetEvents?: FleetChangeSource;
  readonly breakers?: NodeBreakers;
  readonly breaker?: NodeBreakerOptions;
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
}

const TRANSPORTS = {
  http2: createH2Transport,
  'grpc-js': createGrpcTransport,
} satisfies Record<string, (options: SharedTransportOptions) => GrpcTransport>;

export type GrpcTransportKind = keyof typeof TRANSPORTS;

export function createNodeTransport(kind: GrpcTransportKind, options: SharedTransportOptions = {}): GrpcTransport {
  return TRANSPORTS[kind](options);
}
