/**
 * The numbers routing and admission work with, in one place so both read a node the same way.
 *
 *   outstanding(node, model) = queued + inflight (last figures for the model on the node)
 *                              + sentSinceReport (what this gateway sent since those figures;
 *                                `localInflight` when the directory cannot tell, see RoutedNodeView)
 *   score(node, model)       = outstanding / capacity                  (batch rounds ahead)
 *   expectedWaitMs(node, model, fallbackMs)
 *                            = (outstanding / capacity + 1) × execTime (lower is better; the p2c key)
 *   slots(node, model)       = floor(capacity × (1 + overcommit))
 *   room(node, model)        = max(0, slots − outstanding)             (requests we may still send)
 *
 * `capacity` is the node's instances × max batch size for the model (from its load report), so one
 * capacity is one full batch round. `overcommit` lets each node hold that many more rounds in its own
 * queue (default 1: one batch running, one forming), which keeps the node's dynamic batcher fed
 * without moving the whole queue from the gateway, where priorities and deadlines are enforced, to
 * the node. A model missing from a candidate's figures counts as capacity 1 and no load.
 */
import type { NodeModelLoad, NodeView, RoutedNodeView } from '../ports/index.js';

export const DEFAULT_OVERCOMMIT = 1;

const UNKNOWN_LOAD: NodeModelLoad = { queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null, versions: [] };

export function modelLoadOf(node: NodeView, model: string): NodeModelLoad {
  return node.models.get(model) ?? UNKNOWN_LOAD;
}

export function outstanding(node: RoutedNodeView, model: string): number {
  const load = modelLoadOf(node, model);
  return load.queued + load.inflight + (node.sentSinceReport ?? node.localInflight);
}

export function score(node: NodeView, model: string): number {
  return outstanding(node, model) / Math.max(1, modelLoadOf(node, model).capacity);
}

/**
 * When a request sent now would be answered, in ms: the batch rounds ahead of it
 * (`outstanding / capacity`) plus its own round, each taking the node's reported smoothed execution
 * time. This is the p2c key. With equal execution times it orders nodes exactly as `score` does; a
 * node three times slower is worth the same as a fast one only with two rounds fewer ahead, so
 * heterogeneous fleets (an older GPU, a node sharing its host) get traffic in proportion to how fast
 * they answer, not only to how many requests they hold. The own round is a whole execution, not a
 * share of one: a request is answered when its batch ends, so an idle node 3x slower answers later
 * than a fast node with two rounds still ahead. (The first version counted `(outstanding + 1) /
 * capacity` rounds, which made an idle slow node look as good as a fast one with a round ahead, and
 * sent the slow node enough traffic to set the fleet's p99.) `fallbackMs` stands in for a node that
 * has not reported an execution time yet (the fleet's mean), so it is tried rather than starved or
 * flooded.
 */
export function expectedWaitMs(node: NodeView, model: string, fallbackMs: number): number {
  const load = modelLoadOf(node, model);
  const execMs = load.execTimeEmaMs !== null && load.execTimeEmaMs > 0 ? load.execTimeEmaMs : fallbackMs;
  return (outstanding(node, model) / Math.max(1, load.capacity) + 1) * execMs;
}

export function room(node: NodeView, model: string, overcommit = DEFAULT_OVERCOMMIT): number {
  const slots = Math.floor(Math.max(1, modelLoadOf(node, model).capacity) * (1 + overcommit));
  return Math.max(0, slots - outstanding(node, model));
}

/** Capacity-weighted mean of the reported execution times, or null when no node reported one. */
export function reportedExecTimeMs(nodes: readonly NodeView[], model: string): number | null {
  let weighted = 0;
  let weight = 0;
  for (const node of nodes) {
    const load = modelLoadOf(node, model);
    if (load.execTimeEmaMs === null) continue;
    weighted += load.execTimeEmaMs * load.capacity;
    weight += load.capacity;
  }
  return weight === 0 ? null : weighted / weight;
}
