/**
 * The numbers routing and admission work with, in one place so both read a node the same way.
 *
 *   outstanding(node, model) = queued + inflight (last figures for the model on the node)
 *                              + sentSinceReport (what this gateway sent since those figures;
 *                                `localInflight` when the directory cannot tell, see RoutedNodeView)
 *   score(node, model)       = outstanding / capacity                  (lower is better; the p2c key)
 *   slots(node, model)       = floor(capacity × (1 + overcommit))
 *   room(node, model)        = max(0, slots − outstanding)             (requests we may still send)
 *
 * `capacity` is the node's instances × max batch size for the model (from its load report), so one
 * capacity is one full batch round. `overcommit` lets each node hold that many more rounds in its own
 * queue (default 1: one batch running, one forming), which keeps the node's dynamic batcher fed
 * without moving the whole queue from the gateway, where priorities and deadlines are enforced, to
 * the node. A model missing from a candidate's figures counts as capacity 1 and no load.
 */
import type { NodeModelLoad, NodeView } from '../ports/index.js';
import type { RoutedNodeView } from './routing-ports.js';

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
