/**
 * The one place that decides which version of a model a request goes to. The cache keys on its answer
 * and the dispatcher serves it, so both must ask the same chooser (issue 17: they used to choose apart,
 * over different candidates, and a split could key on a version whose only node was behind an open breaker).
 *
 *   1. the version the request names;
 *   2. else the model's traffic split (version-splits.ts) over the versions some usable node serves;
 *   3. else the highest version a usable node reports READY (Triton's default "latest" policy);
 *   4. else undefined: the node's own latest (a static fleet has no version reports).
 * Usable: a candidate (READY, not draining, not stale) whose breaker is not open. When every candidate's
 * breaker is open, steps 2-3 fall back to the candidates, so the choice (and the cache key) stays what it
 * was and cache hits go on being served while the dispatch waits for a breaker to half-open.
 */
import type { BreakerView, NodeDirectory, NodeView } from '../ports/index.js';
import { normalizeRoutingConfig, selectVersion, type RoutingConfig } from './version-splits.js';

export interface VersionChooserOptions {
  readonly directory: NodeDirectory;
  readonly routing: RoutingConfig;
  /** Default: none (every candidate usable). */
  readonly breakers?: BreakerView;
  /** For unsticky splits, in [0, 1); default Math.random. */
  readonly random?: () => number;
}

export interface VersionChooser {
  /**
   * The version for a request of `model` naming `own` ('' or undefined: none); `headers` for a sticky
   * split. Undefined: leave it to the node.
   */
  choose(model: string, own: string | undefined, headers?: { get(name: string): string | null }): string | undefined;
  /** Candidates for (model, version) whose breaker is not open: the nodes a dispatch may use. */
  eligible(model: string, version: string | undefined): NodeView[];
}

const NUMERIC_VERSION = /^[0-9]+$/;

/** Whether decimal string `a` is a larger number than `b` (any length, leading zeros allowed). */
function higher(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  const x = a.replace(/^0+/, '');
  const y = b.replace(/^0+/, '');
  // Without leading zeros, the longer is the larger; equal lengths compare as text.
  return x.length !== y.length ? x.length > y.length : x > y;
}

export function createVersionChooser(options: VersionChooserOptions): VersionChooser {
  const { directory, breakers } = options;
  const routing = normalizeRoutingConfig(options.routing);
  const random = options.random ?? Math.random;

  const eligible = (model: string, version: string | undefined): NodeView[] => {
    const nodes = directory.candidates(model, version);
    return breakers === undefined ? [...nodes] : nodes.filter((node) => !breakers.isOpen(node.id));
  };

  /** The highest numeric version any of `nodes` reports for the model. */
  const latest = (model: string, nodes: readonly NodeView[]): string | undefined => {
    let best: string | undefined;
    for (const node of nodes) {
      for (const version of node.models.get(model)?.versions ?? []) {
        if (NUMERIC_VERSION.test(version) && higher(version, best)) best = version;
      }
    }
    return best;
  };

  return {
    eligible,
    choose(model, own, headers) {
      if (own !== undefined && own !== '') return own;
      const candidates = directory.candidates(model);
      const usable = breakers === undefined ? candidates : candidates.filter((node) => !breakers.isOpen(node.id));
      // Every breaker open: choose as if none were, so the choice does not move (see the file's comment).
      const breakerAware = breakers !== undefined && usable.length > 0;
      const modelRouting = routing.models?.[model];
      if (modelRouting?.splits !== undefined && modelRouting.splits.length > 0) {
        const sticky = modelRouting.stickyHeader === undefined ? undefined : (headers?.get(modelRouting.stickyHeader) ?? undefined);
        const available = (version: string): boolean =>
          breakerAware ? eligible(model, version).length > 0 : directory.candidates(model, version).length > 0;
        const chosen = selectVersion(model, modelRouting, sticky, available, random);
        if (chosen !== undefined) return chosen;
      }
      return latest(model, breakerAware ? usable : candidates);
    },
  };
}
