/**
 * What every upstream call of either transport goes through: a request already cancelled or past its
 * deadline fails before the breaker (not the node's fault), everything else runs in the node's
 * circuit breaker, and any other throwable (a bad response message) becomes a TesseraError.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { NodeView, UpstreamCallOptions } from '../../core/ports/index.js';
import type { NodeBreakers } from './node-breakers.js';

/** Fails the call without touching the network when it can no longer be useful; undefined otherwise. */
export function preflightFailure(node: NodeView, opts: UpstreamCallOptions): TesseraError | undefined {
  if (opts.signal?.aborted) return TesseraError.cancelled('the request was cancelled');
  if (opts.deadline <= Date.now()) {
    return TesseraError.deadlineExceeded(`the request deadline passed before it could be sent to node '${node.id}'`);
  }
  return undefined;
}

export function guardedCall<T>(breakers: NodeBreakers, node: NodeView, opts: UpstreamCallOptions, run: () => Promise<T>): Promise<T> {
  const early = preflightFailure(node, opts);
  if (early !== undefined) return Promise.reject(early);
  return breakers.run(node.id, run).catch((error: unknown) => {
    throw toTesseraError(error);
  });
}
