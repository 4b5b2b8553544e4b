/** What the onnxruntime backend and its worker threads say to each other (payloads of worker/protocol.ts). */
import type { WireOutcome, WireTensor, WorkerTimings } from '../worker/protocol.js';
import type { RunInput } from '../worker/wire-tensor.js';
import type { ExecutionProviderName, GpuProvider } from './execution-providers.js';
import type { SessionSettings } from './session-settings.js';

export interface OrtInit {
  readonly instanceName: string;
  readonly modelPath: string;
  /** A GPU instance: its ordinal, the providers to try in order, and why others were left out. */
  readonly gpu?: {
    readonly device: number;
    readonly providers: readonly GpuProvider[];
    readonly skipped: readonly string[];
    /** The process's WebGPU lock (webgpu-lock.ts), held around a WebGPU session's create, run and release. */
    readonly webGpuLock: SharedArrayBuffer;
  };
  /** KIND_AUTO: when no GPU provider can load, run on the CPU instead of failing the load. */
  readonly cpuFallback: boolean;
  readonly settings: SessionSettings;
}

/** A graph input or output as the session reports it; `dims` has -1 for symbolic or unknown dimensions. */
export interface OrtIoInfo {
  readonly name: string;
  /** onnxruntime's element type name ('float32', 'string', ...). */
  readonly type: string;
  readonly dims: readonly number[];
}

export interface OrtInfo {
  readonly inputs: readonly OrtIoInfo[];
  readonly outputs: readonly OrtIoInfo[];
  readonly provider: ExecutionProviderName;
  /** Set when a GPU was asked for (KIND_AUTO) but no provider could load it, and the session runs on the CPU. */
  readonly gpuError?: string;
}

/**
 * One session.run: a whole batch of a batching model, or one request of a non-batching model. As planned,
 * an input may be a request's tensor lent as it is (a session on the main thread reads it in place); a run
 * sent to a thread holds wire tensors only (`OrtThreadRun`, made by the backend's `forThread`).
 */
export interface OrtRun<Input extends RunInput = RunInput> {
  readonly inputs: readonly Input[];
  readonly outputNames: readonly string[];
}

/** A run as it crosses to a worker thread: every input a transferable buffer. */
export type OrtThreadRun = OrtRun<WireTensor>;

export interface OrtExecuteBody {
  readonly runs: readonly OrtRun[];
  /**
   * Also run each input on a CPU session of the same model and fail a run whose outputs stray from
   * the CPU's by more than this tolerance (output-agreement.ts): the warmup check of GPU instances.
   */
  readonly checkAgainstCpu?: number;
}

export type OrtRunResult = WireOutcome;

/** inputNs: wire inputs to onnxruntime tensors; inferNs: session.run alone; outputNs: outputs back to wire tensors. */
export interface OrtExecuteReply extends WorkerTimings {
  readonly runs: readonly OrtRunResult[];
}
