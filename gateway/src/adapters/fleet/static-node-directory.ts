/**
 * The fleet of embedded mode (no Redis): nodes listed by address in the gateway's config.
 *
 * Without load reports the directory knows only what the config says and what responses tell:
 * - A node without a `models` list is a candidate for EVERY model and version; an unknown model then
 *   surfaces as the node's own NOT_FOUND answer. With `models`, only those are routed to it.
 * - Capacity per model is `capacity` (default 8, one batch of a typical max_batch_size); queue and
 *   in-flight figures start at 0 and come only from responses' trailing metadata (`observe`).
 * - No execution time is known, so admission estimates fall back to the dispatcher's own measure.
 * - Nodes never go stale; a dead one is taken out by its circuit breaker.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { assertValidNodeId } from '../../../../shared/src/fleet/index.js';
import type { FleetChangeSource, NodeDirectory, NodeView } from '../../core/ports/index.js';
import { NodeState } from './fleet-state.js';

export interface StaticNode {
  /** Default: the address. */
  readonly id?: string;
  /** `host:port` of the node's gRPC endpoint (the gateway on Node calls gRPC). */
  readonly grpcAddress?: string;
  /** `host:port` of the node's KServe HTTP endpoint (for transports that speak HTTP). */
  readonly httpAddress?: string;
  /** `host:port` of the node's LLM routes over HTTP/2 (its --llm-h2c-port); absent: HTTP/1.1 at httpAddress. */
  readonly llmH2Address?: string;
  /** Models served; default: any model. */
  readonly models?: readonly string[];
  /** Requests the node runs at once per model; default 8. */
  readonly capacity?: number;
}

export const DEFAULT_STATIC_CAPACITY = 8;

export type StaticNodeDirectory = NodeDirectory & FleetChangeSource;

export function createStaticNodeDirectory(nodes: readonly StaticNode[]): StaticNodeDirectory {
  const entries = nodes.map((node, i) => {
    const address = node.grpcAddress ?? node.httpAddress;
    if (address === undefined) throw TesseraError.invalidArg(`static node ${i}: set grpcAddress or httpAddress`);
    const id = node.id ?? address;
    assertValidNodeId(id);
    const capacity = node.capacity ?? DEFAULT_STATIC_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw TesseraError.invalidArg(`static node '${id}': capacity must be a positive integer (got ${capacity})`);
    }
    const state = new NodeState(id, node.httpAddress ?? null, node.grpcAddress ?? null);
    state.llmH2Address = node.llmH2Address ?? null;
    return { state, models: node.models, capacity };
  });
  const ids = new Set<string>();
  for (const { state } of entries) {
    if (ids.has(state.id)) throw TesseraError.invalidArg(`static node id '${state.id}' is listed twice`);
    ids.add(state.id);
  }
  const byId = new Map(entries.map((entry) => [entry.state.id, entry]));

  /** Makes sure the node has figures for the model (created on first use for "any model" nodes). */
  const serves = (entry: (typeof entries)[number], model: string): boolean => {
    if (entry.models !== undefined && !entry.models.includes(model)) return false;
    if (!entry.state.models.has(model)) {
      entry.state.models.set(model, { queued: 0, inflight: 0, capacity: entry.capacity, execTimeEmaMs: null, versions: [] });
    }
    return true;
  };

  return {
    // Versions are unknown without reports: `version` does not narrow the candidates.
    candidates: (model: string): readonly NodeView[] => entries.filter((entry) => serves(entry, model)).map((entry) => entry.state),
    all: () => entries.map((entry) => entry.state),
    observe(nodeId, model, load) {
      const entry = byId.get(nodeId);
      if (entry && serves(entry, model)) entry.state.observe(model, load);
    },
    track(nodeId) {
      const entry = byId.get(nodeId);
      return entry ? entry.state.track() : () => {};
    },
    // The set never changes; completions already wake the dispatcher.
    onChange: () => () => {},
    async close() {},
  };
}
