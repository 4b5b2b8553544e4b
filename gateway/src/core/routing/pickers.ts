/**
 * Node pickers, chosen by name from a registry (as grpc-js registers load balancers).
 * - `p2c` (default): power of two choices. Two distinct candidates drawn at random, the one with the
 *   lower score wins, ties to the first drawn. The dispatcher scores by expected wait (node-load.ts:
 *   rounds ahead × the node's execution time). Nearly as good as least-loaded, without every gateway
 *   herding onto the same node between two load reports.
 * - `round-robin`: in turn, ignoring load; the baseline for the benchmark.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { NodeView } from '../ports/index.js';

export interface NodePicker {
  /** One of `nodes` (undefined only when `nodes` is empty). `score`: lower is better. */
  pick(model: string, nodes: readonly NodeView[], score: (node: NodeView) => number): NodeView | undefined;
}

export function powerOfTwoChoices(random: () => number = Math.random): NodePicker {
  return {
    pick(_model, nodes, score) {
      if (nodes.length <= 1) return nodes[0];
      const i = Math.min(nodes.length - 1, Math.floor(random() * nodes.length));
      // The second draw skips the first index, so the two are always distinct.
      let j = Math.min(nodes.length - 2, Math.floor(random() * (nodes.length - 1)));
      if (j >= i) j++;
      const a = nodes[i]!;
      const b = nodes[j]!;
      return score(b) < score(a) ? b : a;
    },
  };
}

export function roundRobin(): NodePicker {
  const next = new Map<string, number>();
  return {
    pick(model, nodes) {
      if (nodes.length === 0) return undefined;
      // Nodes come in directory order; sorting by id keeps the rotation stable as the set changes.
      const sorted = [...nodes].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      const turn = next.get(model) ?? 0;
      next.set(model, turn + 1);
      return sorted[turn % sorted.length];
    },
  };
}

export const PICKER_NAMES = ['p2c', 'round-robin'] as const;
export type PickerName = (typeof PICKER_NAMES)[number];

const REGISTRY: Record<PickerName, (random: () => number) => NodePicker> = {
  p2c: (random) => powerOfTwoChoices(random),
  'round-robin': () => roundRobin(),
};

export function createPicker(name: string, random: () => number = Math.random): NodePicker {
  const factory = (REGISTRY as Record<string, ((r: () => number) => NodePicker) | undefined>)[name];
  if (factory === undefined) {
    throw TesseraError.invalidArg(`unknown routing policy '${name}': use one of ${PICKER_NAMES.join(', ')}`);
  }
  return factory(random);
}
