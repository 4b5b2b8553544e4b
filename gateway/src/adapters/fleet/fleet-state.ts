/**
 * The in-memory fleet both directories share: one live NodeView per node, per-model load figures,
 * and this gateway's own counters.
 *
 * - `localInflight`: requests sent through `track` and not yet released.
 * - `sentSinceReport`: requests sent since the node's figures were last replaced (by a load report
 *   or a response's trailing metadata); see RoutedNodeView for why routing wants it. It is per node
 *   while figures are per model: after an `observe` for one model the counter restarts for all, a
 *   small under-count on nodes serving several busy models at once.
 * - `track`'s release function works once; later calls do nothing (the port's contract).
 *
 * The views handed out are live objects (no copy per request): a NodeView read later shows the
 * node's figures at that later time.
 */
import type { FleetChange, NodeModelLoad, RoutedNodeView } from '../../core/ports/index.js';

export interface MutableModelLoad {
  queued: number;
  inflight: number;
  capacity: number;
  execTimeEmaMs: number | null;
  versions: readonly string[];
}

export class NodeState implements RoutedNodeView {
  readonly models = new Map<string, NodeModelLoad & MutableModelLoad>();
  localInflight = 0;
  sentSinceReport = 0;
  llmH2Address: string | null = null;
  constructor(
    readonly id: string,
    public httpAddress: string | null,
    public grpcAddress: string | null,
    public draining = false,
  ) {}

  /** Counts a request sent; the returned function releases it exactly once. */
  track(): () => void {
    this.localInflight++;
    this.sentSinceReport++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.localInflight--;
    };
  }

  /** Fresher figures for one model from a response's trailing metadata. */
  observe(model: string, load: { readonly queued: number; readonly inflight: number }): boolean {
    const entry = this.models.get(model);
    if (entry === undefined) return false;
    entry.queued = load.queued;
    entry.inflight = load.inflight;
    this.sentSinceReport = 0;
    return true;
  }
}

export type FleetListener = (change: FleetChange) => void;

/** The listener set behind `onChange`; a throwing listener is logged by the caller, never fatal. */
export class FleetListeners {
  private readonly listeners = new Set<FleetListener>();

  add(listener: FleetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change: FleetChange, onError: (error: unknown) => void): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        onError(error);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/** Parses one trailing-metadata figure: a non-negative integer, else undefined. */
export function loadFigure(value: unknown): number | undefined {
  const text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  if (text === undefined || !/^[0-9]{1,15}$/.test(text)) return undefined;
  return Number(text);
}
