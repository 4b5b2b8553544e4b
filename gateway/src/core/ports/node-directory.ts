/**
 * The fleet as the gateway sees it: nodes from their load reports (shared/src/fleet), refreshed by
 * each response's trailing metadata, plus what this gateway has sent since the last report.
 */
export interface NodeModelLoad {
  readonly queued: number;
  readonly inflight: number;
  readonly capacity: number;
  readonly execTimeEmaMs: number | null;
  readonly versions: readonly string[];
}

export interface NodeView {
  readonly id: string;
  readonly httpAddress: string | null;
  readonly grpcAddress: string | null;
  /** `host:port` of the node's LLM routes over cleartext HTTP/2; absent or null: reach them over HTTP/1.1. */
  readonly llmH2Address?: string | null;
  readonly draining: boolean;
  /** Per model with at least one READY version. */
  readonly models: ReadonlyMap<string, NodeModelLoad>;
  /** Requests this gateway sent to the node and has not seen answered. */
  readonly localInflight: number;
}

export interface NodeDirectory {
  /** Nodes with the model (and version, if given) READY, not draining, not stale. */
  candidates(model: string, version?: string): readonly NodeView[];
  all(): readonly NodeView[];
  /** A fresher figure from a response's trailing metadata. */
  observe(nodeId: string, model: string, load: { readonly queued: number; readonly inflight: number }): void;
  /** Counts a request sent; the returned function releases it exactly once (later calls do nothing). */
  track(nodeId: string): () => void;
  close(): Promise<void>;
}
