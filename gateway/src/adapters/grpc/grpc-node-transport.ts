/**
 * What the gateway on Node gets from its gRPC transport (h2-transport.ts, on our own HTTP/2 client): the
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
