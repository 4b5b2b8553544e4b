/**
 * The gRPC transports by name, as the config's `grpcTransport` picks them: `http2` (h2-transport.ts),
 * the only one since the grpc-js transport was retired (issue 17); the name stays so a config file
 * that says "http2" keeps working and another transport can be added beside it.
 */
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { FleetChangeSource } from '../../core/ports/index.js';
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
} satisfies Record<string, (options: SharedTransportOptions) => GrpcTransport>;

export type GrpcTransportKind = keyof typeof TRANSPORTS;

export function createNodeTransport(kind: GrpcTransportKind, options: SharedTransportOptions = {}): GrpcTransport {
  return TRANSPORTS[kind](options);
}
