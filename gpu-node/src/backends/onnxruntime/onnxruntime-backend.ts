/**
 * The `onnxruntime` backend: each instance is one onnxruntime-node session, hosted with others in a
 * bounded pool of worker threads (worker/worker-pool.ts). The execution provider follows the instance spec: CPU,
 * or on the spec's GPU the providers of execution-providers.ts (CUDA, WebGPU); a KIND_GPU instance no
 * GPU provider can serve fails the load, and a KIND_AUTO one falls back to the CPU (logged once per backend).
 * On a one-core process, a CPU instance of a tiny model (a version directory of at most `inlineMaxModelBytes`)
 * runs on the main thread instead (worker/inline-session.ts): for it the hop to a worker costs more than the
 * model itself; its batches of large tensors still go to the pool (INLINE_MAX_BATCH_BYTES).
 */
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';
import { silentLogger, type Logger } from '../../../../shared/src/logging/index.js';
import type { ModelIoMetadata } from '../../../../shared/src/model-config/model-io-metadata.js';
import type {
  Backend,
  BackendInstance,
  ExecutionBatchResult,
  ExecutionRequest,
  ExecutionResult,
  InstanceSpec,
  ModelSource,
} from '../backend.js';
import { countInstances } from '../instance-specs.js';
import { executeTiming, failedExecuteTiming } from '../worker/execute-timing.js';
import type { PooledSession } from '../worker/pool-thread.js';
import { WorkerPool } from '../worker/worker-pool.js';
import { forThread, isWire, transferListOf } from '../worker/wire-tensor.js';
import { siblingModule } from '../worker/sibling-module.js';
import { openInlineSession } from '../worker/inline-session.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { planBatch, splitRunOutputs, type ModelIo, type PlannedRun } from './batch-plan.js';
import { configTypeOfOrt } from './element-types.js';
import { cudaProviderInstalled, gpuProviderCandidates, refuseCpuAccelerators, skippedProviderReasons } from './execution-providers.js';
import type { OrtExecuteBody, OrtExecuteReply, OrtInfo, OrtInit, OrtRun, OrtThreadRun } from './protocol.js';
import type { WireTensor } from '../worker/protocol.js';
import { sessionSettingsFromConfig } from './session-settings.js';
import { webGpuLockBuffer } from './webgpu-lock.js';

export interface OnnxRuntimeBackendOptions {
  readonly logger?: Logger;
  /** Cores shared by the instances of one model; default os.availableParallelism(). */
  readonly cores?: number;
  /** Whether the CUDA provider library is installed; default: looked up beside onnxruntime-node's binding. */
  readonly cudaInstalled?: () => boolean;
  /** Worker threads hosting the CPU instances (`--backend-thread-pool-size`); default os.availableParallelism(). */
  readonly threadPoolSize?: number;
  /** How long a pool thread hosting nothing waits before it ends (`--backend-thread-idle-ms`); default DEFAULT_IDLE_GRACE_MS. */
  readonly threadIdleGraceMs?: number;
  /**
   * CPU instances of models whose version directory (the graph and any external weights) holds at most
   * this many bytes run on the main thread; 0 keeps every instance in the pool. Default: INLINE_MAX_MODEL_BYTES
   * when the process has one core (`cores`, else `availableParallelism()`, which follows taskset), else 0. The hop
   * costs ~80 us of a worker's CPU per `simple` batch but takes ~36 us off the event loop, the node's
   * ceiling; with a second core the worker's share is free and the loop serves more, on one core every
   * microsecond is the loop's and inline costs less in all.
   */
  readonly inlineMaxModelBytes?: number;
  /** An inline instance runs a batch of more input bytes than this in the pool. Default INLINE_MAX_BATCH_BYTES. */
  readonly inlineMaxBatchBytes?: number;
}

/**
 * Graphs this small (Triton's `simple` is ~200 bytes) are a handful of elementwise ops; their run takes
 * a few microseconds against ~30 us of CPU for the hand-off to a worker and back.
 */
export const INLINE_MAX_MODEL_BYTES = 16 * 1024;

/**
 * A tiny graph's run grows with its tensors, so an inline instance hands a batch with more input bytes
 * than this to a session of the same model in the pool (opened on first need): a stranger's large
 * tensors never hold the event loop. (Wall time would not do: on a busy core it measures the wait.)
 */
export const INLINE_MAX_BATCH_BYTES = 64 * 1024;

type OrtWorker = PooledSession<OrtInfo, OrtExecuteBody, OrtExecuteReply>;

const WORKER_ENTRY = siblingModule(import.meta.url, 'onnxruntime-worker');
const NOT_EXECUTED_RESULT: ExecutionResult = { error: TesseraError.internal('request was not executed') };

class OnnxRuntimeInstance implements BackendInstance {
  private readonly io: ModelIo;
  /** An inline instance's session in the pool, for its large batches; opened on first need. */
  private pooled: Promise<OrtWorker> | undefined;

  constructor(
    readonly spec: InstanceSpec,
    private readonly worker: OrtWorker,
    config: ModelConfig,
    modelName: string,
    /** Set when `worker` runs on the main thread: opens the same session in the pool. */
    private readonly openInPool?: () => Promise<OrtWorker>,
    private readonly inlineMaxBatchBytes = INLINE_MAX_BATCH_BYTES,
  ) {
    this.io = {
      modelName,
      batching: config.maxBatchSize > 0,
      inputs: worker.info.inputs,
      outputs: worker.info.outputs,
    };
  }

  execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult> {
    return this.run(requests);
  }

  async checkAgainstCpu(request: ExecutionRequest, tolerance: number): Promise<void> {
    if (this.spec.kind !== 'gpu') return;
    const result = (await this.run([request], tolerance)).results[0];
    if (result !== undefined && 'error' in result) throw result.error;
  }

  private async run(requests: readonly ExecutionRequest[], checkAgainstCpu?: number): Promise<ExecutionBatchResult> {
    const start = process.hrtime.bigint();
    const plan = planBatch(requests, this.io);
    // Every slot is filled below, by a run's result or by the request's rejection; the placeholder is
    // shared so that a batch of 64 does not build 64 errors with stack traces that are then discarded.
    const results: ExecutionResult[] = [];
    for (let i = 0; i < requests.length; i++) {
      const rejected = plan.rejected.get(i);
      results.push(rejected === undefined ? NOT_EXECUTED_RESULT : { error: rejected });
    }
    if (plan.runs.length === 0) return { results, timing: failedExecuteTiming(start) };

    let reply: OrtExecuteReply;
    try {
      const planned = plan.runs.length === 1 ? [(plan.runs[0] as PlannedRun).body] : plan.runs.map((r) => r.body);
      const session = this.openInPool !== undefined && inputBytesOf(planned) > this.inlineMaxBatchBytes ? await this.pooledSession(this.openInPool) : this.worker;
      // A session on the main thread reads the requests' lent tensors in place, with no transfer list; a
      // thread gets a copy of each lent tensor (the caller's buffer must not be detached) and moves the rest.
      const inline = session === this.worker && this.openInPool !== undefined;
      const runs = inline ? planned : threadRuns(planned);
      const body: OrtExecuteBody = checkAgainstCpu === undefined ? { runs } : { runs, checkAgainstCpu };
      reply = await session.call(body, inline ? undefined : transferListOf(inputsOf(runs as readonly OrtThreadRun[])));
    } catch (error) {
      const failure = error instanceof TesseraError ? error : TesseraError.internal(String(error));
      for (const run of plan.runs) for (const i of run.requestIndexes) results[i] = { error: failure };
      return { results, timing: failedExecuteTiming(start) };
    }

    const received = process.hrtime.bigint();
    for (let r = 0; r < plan.runs.length; r++) {
      const run = plan.runs[r] as PlannedRun;
      const outcome = reply.runs[r];
      const runResults: ExecutionResult[] =
        outcome === undefined
          ? run.requestIndexes.map(() => ({ error: TesseraError.internal(`instance ${this.spec.name}: a run got no result`) }))
          : 'error' in outcome
            ? run.requestIndexes.map(() => ({ error: new TesseraError(outcome.error.code, outcome.error.message) }))
            : splitRunOutputs(run, outcome.outputs, requests, this.io);
      for (let k = 0; k < run.requestIndexes.length; k++) results[run.requestIndexes[k] as number] = runResults[k] as ExecutionResult;
    }
    // compute_infer is session.run alone; compute_output is the worker's output conversion plus the
    // split here; compute_input is everything else (concatenation, transfer both ways, input conversion).
    return { results, timing: executeTiming(start, received, reply) };
  }

  /** The pool's session for large batches; a failed open fails its batch and is tried again next time. */
  private pooledSession(open: () => Promise<OrtWorker>): Promise<OrtWorker> {
    this.pooled ??= open().catch((error: unknown) => {
      this.pooled = undefined;
      throw error;
    });
    return this.pooled;
  }

  async close(): Promise<void> {
    const pooled = this.pooled;
    this.pooled = undefined;
    await Promise.all([this.worker.close(), pooled?.then((session) => session.close(), () => undefined)]);
  }
}

/** The bytes of the files under `dir`, counted until they pass `cap`; anything unreadable counts as too many. */
async function directoryBytesUpTo(dir: string, cap: number): Promise<number> {
  try {
    let bytes = 0;
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) continue;
      // Symlinks are followed: a linked weights file weighs what it points to.
      bytes += (await stat(join(entry.parentPath, entry.name))).size;
      if (bytes > cap) return bytes;
    }
    return bytes;
  } catch {
    // The pool's load names the problem.
    return Number.POSITIVE_INFINITY;
  }
}

function inputBytesOf(runs: readonly OrtRun[]): number {
  let bytes = 0;
  for (const run of runs) for (const t of run.inputs) bytes += t.data.byteLength;
  return bytes;
}

function inputsOf(runs: readonly OrtThreadRun[]): readonly WireTensor[] {
  return runs.length === 1 ? (runs[0] as OrtThreadRun).inputs : runs.flatMap((r) => r.inputs);
}

/** The runs as they may cross to a thread: each lent input copied once; runs of wire tensors only are kept as they are. */
function threadRuns(runs: readonly OrtRun[]): readonly OrtThreadRun[] {
  return runs.map((run) => (run.inputs.every(isWire) ? (run as OrtThreadRun) : { inputs: run.inputs.map(forThread), outputNames: run.outputNames }));
}

/** An onnxruntime backend and the pools its instances run in (for figures and for closing them in tests). */
export interface OnnxRuntimeBackend extends Backend {
  /** CPU instances (and describe probes). */
  readonly pool: WorkerPool;
  /** GPU instances (KIND_GPU, and KIND_AUTO where a GPU is visible). */
  readonly gpuPool: WorkerPool;
}

export function createOnnxRuntimeBackend(options: OnnxRuntimeBackendOptions = {}): OnnxRuntimeBackend {
  const logger = options.logger ?? silentLogger;
  const cudaInstalled = options.cudaInstalled ?? cudaProviderInstalled;
  let fallbackLogged = false;
  const size = {
    ...(options.threadPoolSize === undefined ? {} : { size: options.threadPoolSize }),
    ...(options.threadIdleGraceMs === undefined ? {} : { idleGraceMs: options.threadIdleGraceMs }),
  };
  const pool = new WorkerPool({ entry: WORKER_ENTRY, ...size });
  // GPU instances take turns on threads of their own: a GPU run, or a wait for the WebGPU lock, must
  // not hold up CPU models (and a thread never waits for the lock while one of its own tasks holds it).
  const gpuPool = new WorkerPool({ entry: WORKER_ENTRY, ...size });

  const inlineMax = options.inlineMaxModelBytes ?? ((options.cores ?? availableParallelism()) === 1 ? INLINE_MAX_MODEL_BYTES : 0);
  const runsInline = async (source: ModelSource, spec: InstanceSpec): Promise<boolean> => {
    if (spec.kind !== 'cpu' || inlineMax <= 0) return false;
    // The whole directory: a small graph file can name gigabytes of external weights beside it.
    return (await directoryBytesUpTo(source.versionDir, inlineMax)) <= inlineMax;
  };
  // onnxruntime-node is loaded on the main thread only once a model runs there.
  const startInline = async (init: OrtInit): Promise<OrtWorker> => {
    const { ortSessions } = await import('./onnxruntime-sessions.js');
    return openInlineSession(ortSessions, init, init.instanceName);
  };

  const startWorker = (init: OrtInit, group?: string): Promise<OrtWorker> =>
    (init.gpu === undefined ? pool : gpuPool).open<OrtInfo, OrtExecuteBody, OrtExecuteReply>(init, {
      instanceName: init.instanceName,
      ...(group === undefined ? {} : { group }),
    });

  return {
    name: 'onnxruntime',
    pool,
    gpuPool,
    defaultModelFilename: 'model.onnx',

    /**
     * Reads the graph's inputs and outputs from a session in a pool thread (loading can take a while). With
     * tiny models inline the pool hosts nothing else: the thread's idle grace lets a burst of describes share
     * it, and it still ends afterwards (sessions opened and released on the main thread grew RSS instead).
     * onnxruntime-node 1.30 has no way to read a graph's inputs and outputs without a session.
     */
    async describe(source): Promise<ModelIoMetadata> {
      const worker = await startWorker({
        instanceName: `${source.name}_describe`,
        modelPath: source.modelPath,
        cpuFallback: false,
        settings: { intraOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'disabled', configEntries: {} },
      });
      try {
        const convert = (kind: string) => (io: OrtInfo['inputs'][number]) => ({
          name: io.name,
          dataType: configTypeOfOrt(io.type, `model ${kind} '${io.name}'`),
          dims: io.dims,
        });
        return { inputs: worker.info.inputs.map(convert('input')), outputs: worker.info.outputs.map(convert('output')) };
      } finally {
        await worker.close();
      }
    },

    async createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
      const settings = sessionSettingsFromConfig(
        source.config,
        spec.instanceCount ?? countInstances(source.config),
        options.cores,
      );
      if (spec.kind === 'cpu') refuseCpuAccelerators(source.config);
      const gpu =
        spec.kind === 'gpu'
          ? {
              device: spec.device,
              providers: gpuProviderCandidates(source.config, spec.device, cudaInstalled()),
              skipped: skippedProviderReasons(source.config, spec.device, cudaInstalled()),
              webGpuLock: webGpuLockBuffer(),
            }
          : undefined;
      const init: OrtInit = {
        instanceName: spec.name,
        modelPath: source.modelPath,
        ...(gpu === undefined ? {} : { gpu }),
        cpuFallback: spec.auto,
        settings,
      };
      const group = `${source.name}/${source.version}`;
      const inline = await runsInline(source, spec);
      const worker = inline ? await startInline(init) : await startWorker(init, group);
      let effective: InstanceSpec = { ...spec, provider: worker.info.provider };
      if (worker.info.gpuError !== undefined) {
        effective = { ...effective, kind: 'cpu', device: -1 };
        if (!fallbackLogged) {
          fallbackLogged = true;
          logger.warn('KIND_AUTO instances run on the CPU: no GPU execution provider could be loaded', {
            model: source.name,
            instance: spec.name,
            reason: worker.info.gpuError,
          });
        }
      }
      const openInPool = inline ? () => startWorker(init, group) : undefined;
      return new OnnxRuntimeInstance(effective, worker, source.config, source.name, openInPool, options.inlineMaxBatchBytes);
    },
  };
}
