/**
 * A NodeDirectory fed by snapshots of the fleet (the FleetDO's list of load reports), for places that
 * cannot hold a Redis subscription: Worker isolates and admission Durable Objects.
 *
 * - `refresh()` loads a snapshot (single flight); `refreshIfOlder(ms)` only when the view is older.
 *   Reports replace older ones of the same node (`supersedes`), nodes absent from a snapshot leave.
 * - Staleness: the shared rule `isStale` with the report's own `ttlMs`, at read time, exactly as the
 *   Node gateway applies it: a node whose reports stopped leaves the pick set after its TTL even if
 *   the FleetDO is unreachable.
 * - In-flight accounting (RoutedNodeView): `sentSinceReport` is the number of requests sent since the
 *   report AND still in flight, i.e. min(sent since the report, localInflight). The Node gateway's
 *   directories count every send since the report, fine when reports come every second; at the edge
 *   reports may come less often (a pusher, or a test posting one report), and one admission object
 *   per model sees ALL edge traffic of its model, so counting completed requests would close the
 *   node for nothing until the next report.
 */
import { isStale, supersedes } from '../../../../shared/src/fleet/index.js';
import type { LoadReport } from '../../../../shared/src/fleet/index.js';
import type { FleetChange, FleetChangeSource, NodeDirectory, NodeModelLoad, NodeView, RoutedNodeView } from '../../core/ports/index.js';
import { FleetListeners } from '../fleet/fleet-state.js';

export interface SnapshotDirectoryOptions {
  /** Loads the current reports (the FleetDO's snapshot). */
  readonly load: () => Promise<readonly LoadReport[]>;
  /** Default Date.now (compared with the reports' sentAt). */
  readonly now?: () => number;
  /** Called when a snapshot cannot be loaded; default: ignored (the view just ages). */
  readonly onError?: (error: unknown) => void;
}

export interface SnapshotDirectory extends NodeDirectory, FleetChangeSource {
  refresh(): Promise<void>;
  /** Refreshes when the last successful snapshot is older than `maxAgeMs` (or there was none). */
  refreshIfOlder(maxAgeMs: number): Promise<void>;
  /** Applies a snapshot directly (tests, and the FleetDO's own answer). */
  apply(reports: readonly LoadReport[]): void;
}

class EdgeNodeState implements RoutedNodeView {
  models = new Map<string, NodeModelLoad>();
  localInflight = 0;
  private sentSince = 0;
  httpAddress: string | null;
  grpcAddress: string | null;
  draining: boolean;

  constructor(public report: LoadReport) {
    this.id = report.nodeId;
    this.httpAddress = report.httpAddress;
    this.grpcAddress = report.grpcAddress;
    this.draining = report.draining;
    this.setReport(report);
  }

  readonly id: string;

  get sentSinceReport(): number {
    return Math.min(this.sentSince, this.localInflight);
  }

  setReport(report: LoadReport): void {
    this.report = report;
    this.httpAddress = report.httpAddress;
    this.grpcAddress = report.grpcAddress;
    this.draining = report.draining;
    this.models = new Map(
      report.models.map((m) => [m.name, { queued: m.queued, inflight: m.inflight, capacity: m.capacity, execTimeEmaMs: m.execTimeEmaMs, versions: m.versions }]),
    );
    this.sentSince = 0;
  }

  observe(model: string, load: { readonly queued: number; readonly inflight: number }): void {
    const entry = this.models.get(model);
    if (entry === undefined) return;
    this.models.set(model, { ...entry, queued: load.queued, inflight: load.inflight });
    this.sentSince = 0;
  }

  track(): () => void {
    this.localInflight++;
    this.sentSince++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.localInflight--;
    };
  }
}

export function createSnapshotDirectory(options: SnapshotDirectoryOptions): SnapshotDirectory {
  const now = options.now ?? Date.now;
  const nodes = new Map<string, EdgeNodeState>();
  const listeners = new FleetListeners();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  const emit = (change: FleetChange): void => listeners.emit(change, (error) => options.onError?.(error));
  const fresh = (node: EdgeNodeState): boolean => !isStale(node.report, now());

  function apply(reports: readonly LoadReport[]): void {
    const seen = new Set<string>();
    for (const report of reports) {
      seen.add(report.nodeId);
      const known = nodes.get(report.nodeId);
      if (known === undefined) {
        nodes.set(report.nodeId, new EdgeNodeState(report));
        emit({ type: 'join', nodeId: report.nodeId });
      } else if (supersedes(report, known.report)) {
        known.setReport(report);
        emit({ type: 'update', nodeId: report.nodeId });
      }
    }
    for (const nodeId of [...nodes.keys()]) {
      if (!seen.has(nodeId)) {
        nodes.delete(nodeId);
        emit({ type: 'leave', nodeId });
      }
    }
  }

  function refresh(): Promise<void> {
    inFlight ??= options
      .load()
      .then(
        (reports) => {
          apply(reports);
          loadedAt = now();
        },
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  return {
    candidates(model, version): readonly NodeView[] {
      return [...nodes.values()].filter((node) => {
        if (node.draining || !fresh(node)) return false;
        const load = node.models.get(model);
        return load !== undefined && (version === undefined || load.versions.includes(version));
      });
    },
    all: () => [...nodes.values()],
    observe: (nodeId, model, load) => nodes.get(nodeId)?.observe(model, load),
    track: (nodeId) => nodes.get(nodeId)?.track() ?? (() => {}),
    onChange: (listener) => listeners.add(listener),
    refresh,
    refreshIfOlder: (maxAgeMs) => (now() - loadedAt > maxAgeMs ? refresh() : Promise.resolve()),
    apply,
    async close() {
      listeners.clear();
    },
  };
}
