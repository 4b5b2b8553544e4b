/** Messages between an onnxruntime_llm instance (main thread) and its engine thread. */
import type { FinishReason } from './engine-api.js';
import type { EngineStats } from './engine-stats.js';
import type { SamplingParameters } from './sampling.js';
import type { LlmSettings } from './llm-config.js';

export interface LlmWorkerData {
  readonly model: string;
  readonly modelPath: string;
  /** Folders searched for the tokenizer file, in order. */
  readonly tokenizerDirs: readonly string[];
  readonly settings: LlmSettings;
  /** The first-token hand-off's counter (first-token-handoff.ts), shared with the main thread. */
  readonly handoff: Int32Array;
}

export type HostMessage =
  | { readonly type: 'add'; readonly id: number; readonly prompt: string; readonly params: SamplingParameters; readonly priority: number; readonly sentAtMs: number }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'stats'; readonly id: number }
  | { readonly type: 'close' };

export interface WireEvent {
  readonly id: number;
  readonly text: string;
  readonly tokens: number;
  readonly promptTokens?: number;
  readonly done?: FinishReason;
  readonly error?: { readonly code: string; readonly message: string };
}

export interface LoadedInfo {
  readonly layers: number;
  readonly heads: number;
  readonly headDim: number;
  readonly vocab: number;
  readonly eosId: number | undefined;
  /** What decode runs fetch from onnxruntime: each present's last position (last-position-outputs.ts) or the full presents, and why. */
  readonly kvFetch: 'last-position' | 'full';
  readonly kvFetchWhy?: string;
}

export type WorkerMessage =
  | { readonly type: 'ready'; readonly info: LoadedInfo }
  | { readonly type: 'load-failed'; readonly error: { readonly code: string; readonly message: string } }
  /** `handoff`: the message's number when the engine waits for the main thread to handle it (first-token-handoff.ts). */
  | { readonly type: 'events'; readonly events: readonly WireEvent[]; readonly handoff?: number }
  | { readonly type: 'stats'; readonly id: number; readonly stats: EngineStats };
