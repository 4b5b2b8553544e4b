/**
 * The `onnxruntime` backend: each instance is one onnxruntime-node session, hosted with others in a
 * bounded pool of worker threads (worker/worker-pool.ts; the main thread never loads onnxruntime at all). The execution provider follows the instance spec: CPU,
 * or on the spec's GPU the providers of execution-providers.ts (CUDA, WebGPU); a KIND_GPU instance no
 * GPU provider can serve fails the load, and a KIND_AUTO one falls back to the CPU (logged once per backend).
 */
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
import { transferListOf } from '../worker/wire-tensor.js';
import { siblingModule } from '../worker/sibling-module.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { planBatch, splitRunOutputs, type ModelIo } from './batch-plan.js';
import { configTypeOfOrt } from './element-types.js';
import { cudaProviderInstalled, gpuProviderCandidates, refuseCpuAccelerators, skippedProviderReasons } from './execution-providers.js';
import type { OrtExecuteBody, OrtExecuteReply, OrtInfo, OrtInit } from './protocol.js';
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
}

type OrtWorker = PooledSession<OrtInfo, OrtExecuteBody, OrtExecuteReply>;

const WORKER_ENTRY = siblingModule(import.meta.url, 'onnxruntime-worker');
const NOT_EXECUTED = TesseraError.internal('request was not executed');

class OnnxRuntimeInstance implements BackendInstance {
  private readonly io: ModelIo;

  constructor(
    readonly spec: InstanceSpec,
    private readonly worker: OrtWorker,
    config: ModelConfig,
    modelName: string,
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
    const notExecuted = { error: NOT_EXECUTED };
    const results: ExecutionResult[] = requests.map((_, i) => {
      const rejected = plan.rejected.get(i);
      return rejected === undefined ? notExecuted : { error: rejected };
    });
    if (plan.runs.length === 0) return { results, timing: failedExecuteTiming(start) };

    let reply: OrtExecuteReply;
    try {
      const runs = plan.runs.map((r) => r.body);
      const body: OrtExecuteBody = checkAgainstCpu === undefined ? { runs } : { runs, checkAgainstCpu };
      reply = await this.worker.call(body, transferListOf(plan.runs.flatMap((r) => r.body.inputs)));
    } catch (error) {
      const failure = error instanceof TesseraError ? error : TesseraError.internal(String(error));
      for (const run of plan.runs) for (const i of run.requestIndexes) results[i] = { error: failure };
      return { results, timing: failedExecuteTiming(start) };
    }

    const received = process.hrtime.bigint();
    plan.runs.forEach((run, r) => {
      const outcome = reply.runs[r];
      const runResults: ExecutionResult[] =
        outcome === undefined
          ? run.requestIndexes.map(() => ({ error: TesseraError.internal(`instance ${this.spec.name}: a run got no result`) }))
          : 'error' in outcome
            ? run.requestIndexes.map(() => ({ error: new TesseraError(outcome.error.code, outcome.error.message) }))
            : splitRunOutputs(run, outcome.outputs, requests, this.io);
      run.requestIndexes.forEach((requestIndex, k) => {
        results[requestIndex] = runResults[k] as ExecutionResult;
      });
    });
    // compute_infer is session.run alone; compute_output is the worker's output conversion plus the
    // split here; compute_input is everything else (concatenation, transfer both ways, input conversion).
    return { results, timing: executeTiming(start, received, reply) };
  }

  close(): Promise<void> {
    return this.worker.close();
  }
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
  const size = options.threadPoolSize === undefined ? {} : { size: options.threadPoolSize };
  const pool = new WorkerPool({ entry: WORKER_ENTRY, ...size });
  // GPU instances take turns on threads of their own: a GPU run, or a wait for the WebGPU lock, must
  // not hold up CPU models (and a thread never waits for the lock while one of its own tasks holds it).
  const gpuPool = new WorkerPool({ entry: WORKER_ENTRY, ...size });

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

    /** Reads the graph's inputs and outputs in a short-lived CPU worker (loading can take a while). */
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
      const worker = await startWorker(
        {
          instanceName: spec.name,
          modelPath: source.modelPath,
          ...(gpu === undefined ? {} : { gpu }),
          cpuFallback: spec.auto,
          settings,
        },
        `${source.name}/${source.version}`,
      );
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
      return new OnnxRuntimeInstance(effective, worker, source.config, source.name);
    },
  };
}
