/**
 * One loaded (or loading, or failed) version of one model: its lifecycle state, its instances, its
 * scheduler and its statistics. A request resolved to a version keeps using that object, so unloading
 * or replacing it never cuts off work already accepted (Triton's shared_ptr<Model> held by requests).
 */
import { clone, create } from '@bufbuild/protobuf';
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import {
  ModelConfigSchema,
  ModelOptimizationPolicySchema,
  ModelOptimizationPolicy_ExecutionAcceleratorsSchema,
  ModelOptimizationPolicy_ExecutionAccelerators_AcceleratorSchema,
  ModelTransactionPolicySchema,
  type ModelConfig,
} from '../../../shared/src/gen/model_config_pb.js';
import type { InferRequest, InferResponse, Tensor } from '../../../shared/src/tensors/index.js';
import type { TraceScope } from '../../../shared/src/tracing/index.js';
import type { Backend, BackendInstance, ExecutionRequest, InstanceSpec, ModelSource } from '../backends/backend.js';
import { VersionLifecycle, type ModelState } from '../lifecycle/model-state.js';
import { collectAfterUnload } from '../lifecycle/collect-after-unload.js';
import type { ExecTimeEma } from '../load-report/exec-time-ema.js';
import { createScheduler } from '../scheduler/create-scheduler.js';
import type { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import { isSchedulerError } from '../scheduler/scheduler-errors.js';
import type { SchedulerRegistry } from '../scheduler/scheduler-registry.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { abortSignalOf, type CallCancellation, type Cancellable } from '../scheduler/call-cancellation.js';
import { applyClassification, readOutputLabels, type OutputLabels } from './classification.js';
import { ModelStatsCollector, type FailureReason } from './model-stats.js';
import { clientOutputShapes, type ValidatedRequest } from './request-validator.js';
import { recordScheduleSpans, wallClockMs } from './schedule-spans.js';
import { runWarmup } from './warmup.js';

/**
 * How a caller takes a decoupled model's responses: each with whether the model flagged it final.
 * `refusal` is what a caller without one (unary infer, an ensemble step) is told instead.
 */
export type ResponseListener = (response: InferResponse, final: boolean) => void;

export const DECOUPLED_REFUSAL = 'this API does not support models with decoupled transaction policy';

/** What a version shares with the rest of its model and node. */
export interface ModelVersionContext {
  /** The model's execution-time EMA (one per model name, shared by its versions), fed per execution. */
  readonly execTimeEma?: ExecTimeEma;
  /** The node's rate limiter under `--rate-limit=execution_count`. */
  readonly rateLimiter?: RateLimiter;
  /** Schedulers registered by name from outside scheduler/ (ensembles only need one). */
  readonly schedulers?: SchedulerRegistry;
}

export class ModelVersion {
  private readonly lifecycle = new VersionLifecycle();
  private scheduler: Scheduler | undefined;
  private instances: BackendInstance[] = [];
  private labels: OutputLabels = new Map();
  private loading: Promise<void> | undefined;
  private unloading: Promise<void> | undefined;
  readonly stats: ModelStatsCollector;
  /** The version as answers carry it, made once rather than per response. */
  private readonly versionText: string;

  constructor(
    readonly source: ModelSource,
    private readonly backend: Backend,
    private readonly context: ModelVersionContext = {},
  ) {
    this.versionText = String(source.version);
    this.stats = new ModelStatsCollector(source.name, this.versionText);
  }

  get name(): string {
    return this.source.name;
  }
  get version(): number {
    return this.source.version;
  }
  get config() {
    return this.source.config;
  }
  get state(): ModelState {
    return this.lifecycle.state;
  }
  get reason(): string {
    return this.lifecycle.reason;
  }
  /**
   * `model_transaction_policy { decoupled: true }`: 0..n responses per request, streamed. An ensemble
   * is decoupled when its scheduler found a decoupled last step.
   */
  get isDecoupled(): boolean {
    return this.config.modelTransactionPolicy?.decoupled === true || this.scheduler?.decoupled === true;
  }
  get isReady(): boolean {
    return this.lifecycle.isReady;
  }
  /** The specs the instances really run with (provider included); empty unless loaded. */
  get instanceSpecs(): readonly InstanceSpec[] {
    return this.instances.map((instance) => instance.spec);
  }

  /**
   * The config as the config API answers it. When GPU instances run on a provider the config did not
   * name, it is filled in as Triton's `gpu_execution_accelerator`, so clients see where the model runs.
   */
  get answeredConfig(): ModelConfig {
    const named = this.config.optimization?.executionAccelerators?.gpuExecutionAccelerator.length ?? 0;
    const chosen = [...new Set(this.instanceSpecs.flatMap((s) => (s.kind === 'gpu' && s.provider !== undefined ? [s.provider] : [])))];
    if (this.isDecoupled && this.config.modelTransactionPolicy?.decoupled !== true) {
      // A decoupled ensemble says so, as a decoupled model's config does.
      const answer = clone(ModelConfigSchema, this.config);
      answer.modelTransactionPolicy = create(ModelTransactionPolicySchema, { decoupled: true });
      return answer;
    }
    if (named > 0 || chosen.length === 0) return this.config;
    const answer = clone(ModelConfigSchema, this.config);
    answer.optimization ??= create(ModelOptimizationPolicySchema);
    answer.optimization.executionAccelerators ??= create(ModelOptimizationPolicy_ExecutionAcceleratorsSchema);
    answer.optimization.executionAccelerators.gpuExecutionAccelerator = chosen.map((name) =>
      create(ModelOptimizationPolicy_ExecutionAccelerators_AcceleratorSchema, { name }),
    );
    return answer;
  }

  /** Unloaded on purpose (as opposed to failed): ignored by strict readiness. */
  get isUnloaded(): boolean {
    return this.lifecycle.isUnloaded;
  }

  /** LOADING → READY, or UNAVAILABLE with the failure as reason. Never throws. */
  load(specs: readonly InstanceSpec[]): Promise<void> {
    this.lifecycle.loading();
    this.loading ??= this.createInstances(specs);
    return this.loading;
  }

  private async createInstances(specs: readonly InstanceSpec[]): Promise<void> {
    // async per spec: a backend that throws synchronously fails its load instead of escaping it.
    const made = await Promise.allSettled(specs.map(async (spec) => this.backend.createInstance(this.source, spec)));
    const instances = made.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      // An ensemble has no instances: its scheduler runs the steps on the composing models.
      const ensemble = this.config.schedulingChoice.case === 'ensembleScheduling';
      if (specs.length === 0 && !ensemble) throw TesseraError.invalidArg(`model '${this.name}' has no instances to serve it`);
      this.labels = await readOutputLabels(this.config, this.source.modelDir);
      // Not READY before warmup: it runs on the instances before any scheduler hands them work.
      await runWarmup(this.source, instances);
      const ema = this.context.execTimeEma;
      this.scheduler = createScheduler(this.config, instances, {
        execution: {
          executionFinished: (batchSize, timing) => {
            this.stats.recordExecution(batchSize, timing);
            ema?.observe((timing.computeInputNs + timing.computeInferNs + timing.computeOutputNs) / 1e6);
          },
        },
        queue: this.stats,
        modelDir: this.source.modelDir,
        ...(this.context.rateLimiter === undefined ? {} : { rateLimiter: this.context.rateLimiter }),
        ...(this.context.schedulers === undefined ? {} : { schedulers: this.context.schedulers }),
      });
      this.instances = instances;
      // An unload requested while loading wins: the version never becomes READY (unload() finishes it).
      if (this.unloading) return;
      this.lifecycle.ready();
    } catch (error) {
      await Promise.allSettled(instances.map((instance) => instance.close()));
      this.scheduler = undefined;
      this.lifecycle.failed(toTesseraError(error).message);
    }
  }

  /**
   * Runs a validated request and keeps the statistics; the caller resolved this version as READY.
   * With `trace`, its `queue` and `compute` spans are recorded under `trace.parent` (schedule-spans.ts).
   */
  async infer(
    request: InferRequest,
    validated: ValidatedRequest,
    signal?: Cancellable,
    trace?: TraceScope,
    stream?: { readonly onResponse?: ResponseListener; readonly refusal?: string },
  ): Promise<InferResponse> {
    const start = process.hrtime.bigint();
    const enqueuedAtMs = trace?.tracer.enabled === true ? wallClockMs() : 0;
    const scheduler = this.scheduler;
    if (!scheduler) {
      throw TesseraError.unavailable(`Request for unknown model: '${this.name}' version ${this.version} is not at ready state`);
    }
    const listener = stream?.onResponse;
    if (this.isDecoupled && listener === undefined) throw TesseraError.unsupported(stream?.refusal ?? DECOUPLED_REFUSAL);
    const wanted = validated.execution.requestedOutputs;
    let responded = false;
    // Written without conditional spreads on the common (non-decoupled) path: each costs an object clone.
    const execution: ExecutionRequest =
      this.isDecoupled && listener !== undefined
        ? {
            ...validated.execution,
            ...(signal === undefined ? {} : { signal: abortSignalOf(signal) }),
            onResponse: (outputs: readonly Tensor[], final: boolean) => {
              // Past a cancellation the caller has had its answer; late responses go nowhere.
              if (signal?.aborted === true) return;
              if (!responded) {
                responded = true;
                this.stats.recordFirstResponse(elapsedNs(start));
              }
              listener(this.shape(request, wanted, outputs), final);
            },
          }
        : signal === undefined
          ? validated.execution
          : withSignal(validated.execution, signal);
    let scheduled;
    try {
      const batchSize = validated.batchSize;
      const id = request.id;
      scheduled = await scheduler.enqueue(signal === undefined ? { execution, batchSize, id } : { execution, batchSize, id, signal });
    } catch (error) {
      const failure = toTesseraError(error);
      // The scheduler's own outcomes were counted by its queue events (or, refusals, are not failures).
      if (!isSchedulerError(error)) this.stats.recordFailure(failureReason(failure), elapsedNs(start));
      throw failure;
    }
    // Untraced, the spans' attributes would only be made to be dropped.
    if (trace !== undefined && trace.tracer.enabled) {
      recordScheduleSpans(trace, enqueuedAtMs, scheduled, { model: this.name, version: String(this.version), batchSize: validated.batchSize });
    }
    if ('error' in scheduled.result) {
      this.stats.recordFailure('BACKEND', elapsedNs(start));
      throw scheduled.result.error;
    }
    // One reading for both: the first response of a non-decoupled request is its completion.
    const tookNs = elapsedNs(start);
    if (!responded) this.stats.recordFirstResponse(tookNs);
    this.stats.recordSuccess(tookNs, scheduled.queueNs, scheduled.timing);
    // A decoupled model's answer has gone to the listener; what is left says only that it completed.
    return this.shape(request, wanted, this.isDecoupled ? [] : scheduled.result.outputs);
  }

  /** The client's answer from the backend's outputs: those it asked for, reshaped and classified as it asked. */
  private shape(request: InferRequest, wanted: readonly string[], outputs: readonly Tensor[]): InferResponse {
    const kept = wanted.length ? outputs.filter((output) => wanted.includes(output.name)) : outputs;
    const shaped = applyClassification(clientOutputShapes(kept, this.config), request.outputs, this.config, this.labels);
    return { id: request.id, modelName: this.name, modelVersion: this.versionText, outputs: shaped };
  }

  /** Requests the version can execute at once: instances × max(1, max_batch_size); 0 unless loaded. */
  capacity(): number {
    return this.instances.length * Math.max(1, this.config.maxBatchSize);
  }

  /** Requests waiting and executing, for load reports. */
  workload(): { queued: number; inflight: number } {
    return { queued: this.scheduler?.queued() ?? 0, inflight: this.scheduler?.inflight() ?? 0 };
  }

  /**
   * UNLOADING now (new requests no longer resolve to it); accepted requests finish, then instances close
   * and the state becomes UNAVAILABLE "unloaded". Idempotent; the promise settles when it is all done.
   */
  unload(): Promise<void> {
    if (this.unloading) return this.unloading;
    this.lifecycle.unloading();
    this.unloading = (async () => {
      await this.loading;
      const wasFailed = this.lifecycle.isUnavailable;
      await this.scheduler?.stop();
      await Promise.allSettled(this.instances.map((instance) => instance.close()));
      this.instances = [];
      if (!wasFailed) this.lifecycle.unloaded();
      collectAfterUnload();
    })();
    return this.unloading;
  }
}

function elapsedNs(start: bigint): number {
  return Number(process.hrtime.bigint() - start);
}

/** A failure that is not the scheduler's own: the backend's (thrown or closed instance), else OTHER. */
function failureReason(error: TesseraError): FailureReason {
  switch (error.code) {
    case 'INTERNAL':
    case 'UNAVAILABLE':
      return 'BACKEND';
    case 'CANCELLED':
      return 'CANCELED';
    default:
      return 'OTHER';
  }
}

/**
 * The execution with the request's signal, copied into a class instance: `{ ...execution, signal }`
 * (and a spread with a getter) cost ~1 µs per request, 1.5% of the node's CPU on `simple`, against
 * ~0.1 µs for Object.assign into an instance (docs/benchmarks.md, issue 18, eighth pass). A call's
 * cancellation record (call-cancellation.ts) makes its AbortSignal only when a backend reads `signal`
 * (TypeScript models, ensembles, LLMs); the onnxruntime backend never does, so its gRPC requests make none.
 * The validator's execution carries no signal of its own, so nothing is copied over the getter.
 */
function withSignal(execution: ExecutionRequest, cancellable: Cancellable): ExecutionRequest {
  return cancellable instanceof AbortSignal
    ? Object.assign(new SignalledExecution(cancellable), execution)
    : Object.assign(new CallExecution(cancellable), execution);
}

class SignalledExecution {
  constructor(readonly signal: AbortSignal) {}
}

class CallExecution {
  constructor(private readonly cancellation: CallCancellation) {}

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}
