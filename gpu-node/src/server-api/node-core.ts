/**
 * The façade the node's protocol servers (HTTP, gRPC) call. It is the only thing they know about the
 * node's inside: servers translate wire formats to these calls and the results back, nothing more.
 * Every method throws TesseraError (shared/src/errors) for anything that is not a success.
 */
import type { InferRequest, InferResponse, Datatype } from '../../../shared/src/tensors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { StreamInterval } from '../../../shared/src/model-config/index.js';
import type { TraceContext } from '../../../shared/src/tracing/index.js';
import type { ModelStatistics } from '../models/model-statistics.js';
import type { LoadOptions } from '../repository/load-options.js';
import type { RepositoryIndexEntry } from '../repository/repository-index.js';
import type { Cancellable } from '../scheduler/call-cancellation.js';

// Result types of the calls below live with what produces them; re-exported for the servers.
export type { ModelState } from '../lifecycle/model-state.js';
export type { DurationStat, ModelStatistics } from '../models/model-statistics.js';
export type { LoadOptions } from '../repository/load-options.js';
export type { RepositoryIndexEntry } from '../repository/repository-index.js';
export type { Cancellable, CallCancellation } from '../scheduler/call-cancellation.js';

export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

export interface TensorMetadata {
  readonly name: string;
  readonly datatype: Datatype;
  /** Config dims, prefixed with -1 when the model batches (max_batch_size >= 1). */
  readonly shape: readonly number[];
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

export interface InferOptions {
  /**
   * Aborted when the client goes away or its deadline passes: the request is dropped, not executed.
   * An AbortSignal, or a call's cancellation record that makes none unless a backend asks (call-cancellation.ts).
   */
  readonly signal?: Cancellable;
  /** The caller's span (W3C `traceparent` of the HTTP request or gRPC call): `node.infer` continues its trace. */
  readonly traceParent?: TraceContext;
  /**
   * Decoupled models: told of every response as the model sends it, with whether the model flagged it
   * final; `infer` then resolves when the request completes, with no outputs. Without it a decoupled
   * model is refused with UNSUPPORTED `decoupledRefusal` (each API words it as Triton does).
   * Ignored for other models, whose one response `infer` resolves with.
   */
  readonly onResponse?: (response: InferResponse, final: boolean) => void;
  readonly decoupledRefusal?: string;
}

export interface NodeCore {
  isLive(): boolean;
  /** Ready when the server is not exiting and every model it was asked to load is READY (Triton's strict readiness). */
  isReady(): boolean;
  serverMetadata(): ServerMetadata;
  modelMetadata(name: string, version?: string): ModelMetadata;
  /** The normalized config of the given (or latest ready) version. */
  modelConfig(name: string, version?: string): ModelConfig;
  isModelReady(name: string, version?: string): boolean;
  /** The model's folder in the repository (`<repository>/<model>`); throws as modelConfig does. */
  modelDirectory(name: string, version?: string): string;
  /** Whether the version (latest ready when omitted) is decoupled; throws as modelConfig does. */
  isDecoupled(name: string, version?: string): boolean;
  /** How the version's streamed responses are grouped into writes (its config, else the node's default); throws as modelConfig does. */
  streamInterval(name: string, version?: string): StreamInterval;
  infer(request: InferRequest, options?: InferOptions): Promise<InferResponse>;
  /** Omitting `name` gives every model; a named model with no ready version throws INVALID_ARG. */
  statistics(name?: string, version?: string): readonly ModelStatistics[];
  repositoryIndex(readyOnly: boolean): Promise<readonly RepositoryIndexEntry[]>;
  /** Blocks until the load succeeded or failed. UNAVAILABLE outside explicit mode. */
  loadModel(name: string, options?: LoadOptions): Promise<void>;
  /** Returns without waiting for the unload to finish. UNAVAILABLE outside explicit mode. */
  unloadModel(name: string, options?: { unloadDependents?: boolean }): Promise<void>;
  /** Queue depth and in-flight count, for load reports and gRPC trailing metadata. */
  modelLoad(name: string): { readonly queued: number; readonly inflight: number };
}
