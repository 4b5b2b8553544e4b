/**
 * The contract between the node's model machinery and a backend (onnxruntime, typescript, ...).
 * Backends are chosen by name from a registry; a backend makes execution instances, and each instance
 * executes a list of requests at once (a batch), as Triton's TRITONBACKEND_ModelInstanceExecute does.
 */
import type { Parameters, Tensor } from '../../../shared/src/tensors/index.js';
import type { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { ModelIoMetadata } from '../../../shared/src/model-config/model-io-metadata.js';

/** One version of one model, as found in the repository, with its normalized, validated config. */
export interface ModelSource {
  readonly name: string;
  readonly version: number;
  /** `<repository>/<model>` */
  readonly modelDir: string;
  /** `<repository>/<model>/<version>` */
  readonly versionDir: string;
  /** `<versionDir>/<default_model_filename or the backend's default>` */
  readonly modelPath: string;
  readonly config: ModelConfig;
}

export type InstanceKind = 'cpu' | 'gpu';

export interface InstanceSpec {
  /** Triton's naming: `<group name>_<index>` (group name defaults to the model name). */
  readonly name: string;
  readonly groupName: string;
  readonly kind: InstanceKind;
  /** GPU ordinal for kind 'gpu'; -1 for CPU. */
  readonly device: number;
  /** Whether KIND_AUTO chose this kind (so a backend may fall back to CPU and say so). */
  readonly auto: boolean;
  /**
   * How many instances the model has in all groups, so a backend can share the cores among them
   * (onnxruntime's default intra-op threads). Backends count the config's groups when it is absent.
   */
  readonly instanceCount?: number;
  /** The execution provider the instance really runs on ('cpu', 'cuda', 'webgpu'), where the backend has a choice. */
  readonly provider?: string;
}

export interface ExecutionRequest {
  /** Inputs with their full shapes (batch dimension included when the model batches). */
  readonly inputs: readonly Tensor[];
  /** Output names to return; every model output when empty. */
  readonly requestedOutputs: readonly string[];
  readonly parameters: Parameters;
  /**
   * Fires when the client goes away (or its deadline passes) while the request runs; a backend that
   * can stop early (a decoupled model streaming responses) passes it on to the model.
   */
  readonly signal?: AbortSignal;
  /**
   * Decoupled models only (`model_transaction_policy { decoupled: true }`): told of every response the
   * model sends before the request completes, each with the outputs in the model's order and whether
   * the model flagged it final. The request's ExecutionResult then only says how it ended: `{ outputs: [] }`
   * when the model completed it, or `{ error }`.
   */
  readonly onResponse?: (outputs: readonly Tensor[], final: boolean) => void;
}

export type ExecutionResult = { readonly outputs: readonly Tensor[] } | { readonly error: TesseraError };

export interface ExecutionTiming {
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

export interface ExecutionBatchResult {
  /** One result per request, in the order given. */
  readonly results: readonly ExecutionResult[];
  readonly timing: ExecutionTiming;
}

export interface BackendInstance {
  /** The spec the instance really runs with (a KIND_AUTO instance that fell back to CPU says 'cpu'). */
  readonly spec: InstanceSpec;
  /**
   * How many executions the instance takes at once (default 1). An engine that batches inside itself
   * (onnxruntime_llm's continuous batching) takes many, so the default scheduler hands it every request.
   */
  readonly concurrency?: number;
  /**
   * Runs one batch. Resolves with one result per request even when the whole batch fails (a crashed
   * worker, a model that throws): each request then carries the error. Never rejects.
   */
  execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult>;
  /**
   * Runs one request here and on the CPU and rejects when the outputs stray by more than `tolerance`
   * (the warmup check of GPU instances); absent where the instance has no GPU provider to check.
   */
  checkAgainstCpu?(request: ExecutionRequest, tolerance: number): Promise<void>;
  close(): Promise<void>;
}

export interface Backend {
  /** Registry name: 'onnxruntime', 'typescript'. */
  readonly name: string;
  /** The file a version folder holds when `default_model_filename` is empty (e.g. 'model.onnx'). */
  readonly defaultModelFilename: string;
  /** Metadata read from the model file, for auto-complete; undefined when the backend cannot tell. */
  describe?(source: Omit<ModelSource, 'config'> & { readonly config: ModelConfig }): Promise<ModelIoMetadata | undefined>;
  createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance>;
}
