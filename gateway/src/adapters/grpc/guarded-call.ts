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

/**
 * Least time a call must have had on the wire for its DEADLINE_EXCEEDED to say something about the
 * node. A request that spent its deadline in the gateway's own admission queue reaches the node with
 * a sliver of time left and expires there whatever the node's health: counting it would let a flood
 * of free-tier requests, each within its own limits, open a node's breaker for every tier.
 */
export const DEFAULT_MIN_NODE_BUDGET_MS = 1000;

export function guardedCall<T>(
  breakers: NodeBreakers,
  node: NodeView,
  opts: UpstreamCallOptions,
  run: () => Promise<T>,
  minNodeBudgetMs = DEFAULT_MIN_NODE_BUDGET_MS,
): Promise<T> {
  const early = preflightFailure(node, opts);
  if (early !== undefined) return Promise.reject(early);
  const budgetMs = opts.deadline - Date.now();
  return breakers
    .run(node.id, () =>
      run().catch((error: unknown) => {
        throw excuseIfNotTheNodes(error, opts, budgetMs, minNodeBudgetMs);
      }),
    )
    .catch(rethrowAsTessera);
}

/** One function for every call, not a closure per call. */
function rethrowAsTessera(error: unknown): never {
  throw toTesseraError(error);
}

/**
 * Marks a failure the node did not cause (`excused`: countsAgainstNode then says no): the caller
 * cancelled, or the deadline ran out while the node had less than `minNodeBudgetMs` of it.
 */
function excuseIfNotTheNodes(error: unknown, opts: UpstreamCallOptions, budgetMs: number, minNodeBudgetMs: number): unknown {
  const tessera = toTesseraError(error);
  const cancelled = opts.signal?.aborted === true;
  const starved = tessera.code === 'DEADLINE_EXCEEDED' && budgetMs < minNodeBudgetMs;
  return cancelled || starved ? Object.assign(tessera, { excused: true }) : error;
}
