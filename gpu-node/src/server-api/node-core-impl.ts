/**
 * The NodeCore the protocol servers call: the repository manager (lifecycle, models, schedulers)
 * behind Triton's server-level semantics: readiness, metadata, request validation, statistics,
 * the repository API and graceful shutdown.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelLoad } from '../../../shared/src/fleet/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import { DEFAULT_STREAM_INTERVAL, streamIntervalOf, type StreamInterval } from '../../../shared/src/model-config/index.js';
import { assertValidModelName } from '../../../shared/src/names/index.js';
import type { InferRequest, InferResponse } from '../../../shared/src/tensors/index.js';
import { noopTracer, type Tracer } from '../../../shared/src/tracing/index.js';
import type { Backend } from '../backends/backend.js';
import { defaultBackendRegistry } from '../backends/registry.js';
import { createModelPlatform } from '../models/default-platform.js';
import { RepositoryManager, type ControlMode } from '../repository/repository-manager.js';
import type { ModelPlatform } from '../models/model-platform.js';
import type { InstanceSnapshot } from '../models/instance-snapshot.js';
import type { ModelStatsSnapshot } from '../models/model-stats.js';
import type { ModelVersion, ResponseListener } from '../models/model-version.js';
import { configDatatype, validateInferRequest } from '../models/request-validator.js';
import type { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import type {
  InferOptions,
  LoadOptions,
  ModelMetadata,
  ModelStatistics,
  NodeCore,
  RepositoryIndexEntry,
  ServerMetadata,
  TensorMetadata,
} from './node-core.js';

/** Extensions this node implements end to end (core + protocol servers). */
export const DEFAULT_EXTENSIONS: readonly string[] = [
  'model_repository',
  'model_repository(unload_dependents)',
  'model_configuration',
  'classification',
  'binary_tensor_data',
  'parameters',
  'statistics',
];

export interface NodeCoreOptions {
  readonly repositoryPath: string;
  /** Folders a model folder may resolve into through symbolic links; default the repository (repository-manager.ts). */
  readonly repositoryRoots?: readonly string[];
  /** Default 'none'. */
  readonly controlMode?: ControlMode;
  /** Explicit mode: models to load at start (`*` = all). Default none. */
  readonly loadModels?: readonly string[];
  /** Poll mode: seconds between scans. Default 15. */
  readonly pollSecs?: number;
  /** Disables config auto-complete. Default false. */
  readonly strict?: boolean;
  /** Models loaded at once (Triton's --model-load-thread-count). Default 4. */
  readonly loadThreadCount?: number;
  /** Server name in metadata (Triton's --id). Default 'triton'. */
  readonly serverId?: string;
  /** Server version in metadata. Default '2.73.0dev' (the Triton release whose protocol we follow). */
  readonly version?: string;
  /** Extensions advertised in metadata. Default DEFAULT_EXTENSIONS. */
  readonly extensions?: readonly string[];
  /** Config reader + backends. Default: the shared config reader over `backends`. */
  readonly platform?: ModelPlatform;
  /** The backend registered under a name. Default: the process-wide registry (onnxruntime, typescript). */
  readonly backends?: (name: string) => Backend | undefined;
  /** Told about background failures (poll reloads). Default: ignored. */
  readonly onError?: (message: string) => void;
  /** `--rate-limit=execution_count`: the node's one rate limiter, used by every model. Default off. */
  readonly rateLimiter?: RateLimiter;
  /** Spans `node.infer` with children `queue` and `compute` per request; default noopTracer (off). */
  readonly tracer?: Tracer;
  /** `--stream-interval` / `--stream-interval-ms`: for decoupled models whose config sets neither; default one write per response. */
  readonly streamInterval?: StreamInterval;
}

export interface TesseraNodeCore extends NodeCore {
  /** Loads the startup models. Failed models stay UNAVAILABLE with their reason (the node is then not ready). */
  start(): Promise<void>;
  /**
   * Stops taking work (infer → UNAVAILABLE "Server is exiting"), lets accepted requests finish for at
   * most `timeoutMs` (default 30 000, Triton's --exit-timeout-secs), then unloads every model.
   */
  shutdown(options?: { timeoutMs?: number }): Promise<void>;
  /** Counters of every loaded version for the metrics exporter. */
  statsSnapshots(): readonly ModelStatsSnapshot[];
  /** Where each instance of every READY version runs, for the metrics exporter. */
  instanceSnapshots(): readonly InstanceSnapshot[];
  /**
   * Per model with a READY version, what the load reporter's `source()` returns: its READY versions,
   * queued and in-flight requests (draining versions included), capacity and execution-time EMA.
   */
  loadSnapshot(): readonly ModelLoad[];
  /** One repository scan now (poll mode). */
  poll(): Promise<void>;
}

export function createNodeCore(options: NodeCoreOptions): TesseraNodeCore {
  const registry = defaultBackendRegistry;
  const platform =
    options.platform ??
    createModelPlatform(
      options.backends
        ? { backends: options.backends }
        : {
            backends: (name) => (registry.names().includes(name) ? registry.get(name) : undefined),
            backendNames: registry.names(),
          },
    );
  return new NodeCoreImpl(options, platform);
}

class NodeCoreImpl implements TesseraNodeCore {
  private readonly manager: RepositoryManager;
  private started = false;
  private exiting = false;

  constructor(
    private readonly options: NodeCoreOptions,
    platform: ModelPlatform,
  ) {
    this.manager = new RepositoryManager({
      repositoryPath: options.repositoryPath,
      ...(options.repositoryRoots === undefined ? {} : { repositoryRoots: options.repositoryRoots }),
      platform,
      ...(options.controlMode === undefined ? {} : { controlMode: options.controlMode }),
      ...(options.loadModels === undefined ? {} : { loadModels: options.loadModels }),
      ...(options.pollSecs === undefined ? {} : { pollSecs: options.pollSecs }),
      ...(options.strict === undefined ? {} : { strict: options.strict }),
      ...(options.loadThreadCount === undefined ? {} : { loadThreadCount: options.loadThreadCount }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    });
  }

  async start(): Promise<void> {
    await this.manager.start();
    this.started = true;
  }

  async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    this.exiting = true;
    const timeoutMs = options.timeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    // Like Triton, exit after the timeout even if some requests never finished.
    await Promise.race([this.manager.stop(), expired]);
    clearTimeout(timer);
  }

  poll(): Promise<void> {
    return this.manager.poll();
  }

  isLive(): boolean {
    this.refuseWhileExiting('Server exiting');
    return this.started;
  }

  isReady(): boolean {
    this.refuseWhileExiting('Server exiting');
    return this.started && this.manager.allReady();
  }

  serverMetadata(): ServerMetadata {
    return {
      name: this.options.serverId ?? 'triton',
      version: this.options.version ?? '2.73.0dev',
      extensions: this.options.extensions ?? DEFAULT_EXTENSIONS,
    };
  }

  modelMetadata(name: string, version?: string): ModelMetadata {
    const resolved = this.manager.resolve(name, version);
    const config = resolved.config;
    const versions =
      version === undefined || version === ''
        ? this.manager.readyVersions(name).map((v) => String(v.version))
        : [String(resolved.version)];
    const batchDim = config.maxBatchSize >= 1 ? [-1] : [];
    const tensor = (t: { name: string; dataType: number; dims: readonly (number | bigint)[] }): TensorMetadata => ({
      name: t.name,
      datatype: configDatatype(t.dataType) ?? 'BYTES',
      shape: [...batchDim, ...t.dims.map(Number)],
    });
    return {
      name,
      versions,
      platform: config.platform || config.backend,
      inputs: config.input.map(tensor),
      outputs: config.output.map(tensor),
    };
  }

  modelConfig(name: string, version?: string): ModelConfig {
    return this.manager.resolve(name, version).answeredConfig;
  }

  /**
   * True when the version is READY. The cases Triton answers with an error status (unknown model,
   * unknown version, version not ready, no ready version) throw its NOT_FOUND / UNAVAILABLE errors.
   */
  isModelReady(name: string, version?: string): boolean {
    return this.manager.resolve(name, version).isReady;
  }

  modelDirectory(name: string, version?: string): string {
    return this.manager.resolve(name, version).source.modelDir;
  }

  isDecoupled(name: string, version?: string): boolean {
    return this.manager.resolve(name, version).isDecoupled;
  }

  streamInterval(name: string, version?: string): StreamInterval {
    return streamIntervalOf(this.manager.resolve(name, version).config, this.options.streamInterval ?? DEFAULT_STREAM_INTERVAL);
  }

  infer(request: InferRequest, options: InferOptions = {}): Promise<InferResponse> {
    const tracer = this.options.tracer ?? noopTracer;
    // Untraced (the default), no span is made: its attributes and scope would only be dropped. Not an
    // async function, so the version's promise is answered as it is, without one more wrapped around it.
    if (tracer.enabled) return this.inferTraced(request, options, tracer);
    try {
      if (this.exiting) throw TesseraError.unavailable('Server is exiting');
      const version = this.manager.resolve(request.modelName, request.modelVersion);
      const validated = validateInferRequest(request, version.config, version.name);
      return version.infer(request, validated, options.signal, undefined, streamOf(options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async inferTraced(request: InferRequest, options: InferOptions, tracer: Tracer): Promise<InferResponse> {
    if (this.exiting) throw TesseraError.unavailable('Server is exiting');
    const span = tracer.startSpan('node.infer', {
      parent: options.traceParent,
      kind: 'server',
      attributes: { 'tessera.model': request.modelName, 'tessera.request_id': request.id || undefined },
    });
    try {
      const version = this.manager.resolve(request.modelName, request.modelVersion);
      span.setAttribute('tessera.model_version', String(version.version));
      const validated = validateInferRequest(request, version.config, version.name);
      span.setAttribute('tessera.batch_size', validated.batchSize);
      return await version.infer(request, validated, options.signal, { tracer, parent: span.context() }, streamOf(options));
    } catch (error) {
      span.setError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  statistics(name?: string, version?: string): readonly ModelStatistics[] {
    return this.statsVersions(name, version).map((v) => v.stats.statistics());
  }

  statsSnapshots(): readonly ModelStatsSnapshot[] {
    return this.statsVersions().map((v) => v.stats.snapshot());
  }

  instanceSnapshots(): readonly InstanceSnapshot[] {
    return this.statsVersions().flatMap((v) =>
      v.instanceSpecs.map((spec) => ({
        model: v.name,
        version: String(v.version),
        instance: spec.name,
        kind: spec.kind,
        device: spec.device,
        provider: spec.provider ?? 'cpu',
      })),
    );
  }

  repositoryIndex(readyOnly: boolean): Promise<readonly RepositoryIndexEntry[]> {
    return this.manager.repositoryIndex(readyOnly);
  }

  async loadModel(name: string, options?: LoadOptions): Promise<void> {
    this.refuseWhileExiting('Server is exiting');
    await this.manager.loadModel(name, options);
  }

  async unloadModel(name: string): Promise<void> {
    this.refuseWhileExiting('Server is exiting');
    await this.manager.unloadModel(name);
  }

  modelLoad(name: string): { readonly queued: number; readonly inflight: number } {
    return this.manager.workload(name);
  }

  loadSnapshot(): readonly ModelLoad[] {
    return this.manager.servingModels().map((model) => {
      const { queued, inflight } = this.manager.workload(model.name);
      return {
        name: model.name,
        versions: model.versions.map((v) => String(v.version)),
        queued,
        inflight,
        capacity: model.capacity,
        execTimeEmaMs: model.execTimeEmaMs,
      };
    });
  }

  /** Triton reports statistics of READY versions only. */
  private statsVersions(name?: string, version?: string): ModelVersion[] {
    if (name === undefined || name === '') {
      return this.manager.models().flatMap((model) => model.versions.filter((v) => v.isReady));
    }
    if (version !== undefined && version !== '') return [this.manager.resolve(name, version)];
    const ready = this.manager.readyVersions(name);
    if (ready.length === 0) {
      assertValidModelName(name);
      throw TesseraError.invalidArg(`requested model '${name}' is not available`);
    }
    return ready;
  }

  private refuseWhileExiting(message: string): void {
    if (this.exiting) throw TesseraError.unavailable(message);
  }
}

/** What a version needs of the caller's streaming options; undefined when it gave none (the usual unary call). */
function streamOf(options: InferOptions): { readonly onResponse?: ResponseListener; readonly refusal?: string } | undefined {
  const { onResponse, decoupledRefusal: refusal } = options;
  if (onResponse === undefined) return refusal === undefined ? undefined : { refusal };
  return refusal === undefined ? { onResponse } : { onResponse, refusal };
}
