/** What the onnxruntime backend and its worker threads say to each other (payloads of worker/protocol.ts). */
import type { WireOutcome, WireTensor, WorkerTimings } from '../worker/protocol.js';
import type { SessionSettings } from './session-settings.js';

export interface OrtInit {
  readonly instanceName: string;
  readonly modelPath: string;
  /** GPU ordinal for the CUDA execution provider; undefined for the CPU provider. */
  readonly cudaDevice?: number;
  /** KIND_AUTO: when CUDA cannot load, run on the CPU instead of failing the load. */
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
  readonly provider: 'cpu' | 'cuda';
  /** Set when CUDA was asked for (KIND_AUTO) but could not load, and the session runs on the CPU. */
  readonly cudaError?: string;
}

/** One session.run: a whole batch of a batching model, or one request of a non-batching model. */
export interface OrtRun {
  readonly inputs: readonly WireTensor[];
  readonly outputNames: readonly string[];
}

export interface OrtExecuteBody {
  readonly runs: readonly OrtRun[];
}

export type OrtRunResult = WireOutcome;

/** inputNs: wire inputs to onnxruntime tensors; inferNs: session.run alone; outputNs: outputs back to wire tensors. */
export interface OrtExecuteReply extends WorkerTimings {
  readonly runs: readonly OrtRunResult[];
}
