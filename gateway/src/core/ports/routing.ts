/**
 * Small capabilities the dispatcher uses beyond the NodeDirectory / NodeTransport ports. They are
 * optional: adapters that have them (the Redis and static directories, the gRPC transport) pass them
 * in explicitly through `createDispatcher`'s options.
 */
import type { NodeView } from './node-directory.js';

/** Per-node circuit breakers as routing sees them: an open breaker takes its node out of the pick set. */
export interface BreakerView {
  /** True while calls to the node would be refused without being tried. */
  isOpen(nodeId: string): boolean;
}

export interface FleetChange {
  readonly type: 'join' | 'leave' | 'update';
  readonly nodeId: string;
}

/** Fleet changes as they happen, so waiting requests are dispatched as soon as a node has room. */
export interface FleetChangeSource {
  /** Returns the unsubscribe function. */
  onChange(listener: (change: FleetChange) => void): () => void;
}

/**
 * A NodeView that also says how many requests this gateway sent to the node since its current load
 * figures were taken (a load report or a response's trailing metadata). Those figures already count
 * our earlier requests, so adding all of `localInflight` would count them twice. Directories that
 * cannot tell leave it undefined and `localInflight` is used instead (an over-estimate).
 */
export interface RoutedNodeView extends NodeView {
  readonly sentSinceReport?: number;
}

/** What a transport may attach to the TesseraError it throws. */
export interface UpstreamErrorDetails {
  /** The node never accepted the request (see NodeTransport's TransportFailure): retry allowed. */
  readonly notAccepted?: boolean;
  /** The node's load from a failed call's trailing metadata. */
  readonly load?: { readonly queued: number; readonly inflight: number };
  /** The failure was not the node's doing (a cancellation, a deadline spent in the gateway): no breaker failure. */
  readonly excused?: boolean;
}
