/**
 * What the gateway on Node gets from either gRPC transport (grpc-js's or our node:http2 one): the
 * NodeTransport port plus the per-node breakers the dispatcher routes around and a way to drop one
 * node's connection.
 */
import type { NodeTransport } from '../../core/ports/index.js';
import type { NodeBreakers } from './node-breakers.js';

export interface GrpcTransport extends NodeTransport {
  readonly breakers: NodeBreakers;
  /** Closes the node's connection and forgets its breaker. */
  closeNode(nodeId: string): void;
}
