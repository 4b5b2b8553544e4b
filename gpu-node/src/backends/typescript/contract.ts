/**
 * The contract between the `typescript` backend and a model module (`model.js`, `model.mjs` or
 * `model.ts` in the version folder), in the spirit of Triton's Python backend. The example model
 * `gpu-node/src/example-models/ts-scale-model.js` is written against it.
 *
 * The module exports (named exports, or the same names on a default export / CommonJS module.exports):
 *
 * - `initialize(args)` (optional, may be async): once per instance, in that instance's worker thread,
 *   before any execute. Throwing fails the load.
 * - `execute(requests)` (required, may be async): once per batch; returns one response per request,
 *   in order. Throwing fails every request of the batch with INTERNAL and the thrown message.
 * - `finalize()` (optional, may be async): once when the instance unloads.
 *
 * Every instance is its own worker thread with its own copy of the module, so module-level state is
 * per instance and a slow execute blocks only its instance.
 */
import type { AnyTypedArray, Datatype, ParameterValue } from '../../../../shared/src/tensors/index.js';

/** The typed array a datatype's data comes as (FP16/BF16: raw 16-bit patterns; BOOL: 0/1 bytes). */
export type ModelTypedArray = AnyTypedArray;

export interface ModelInitializeArgs {
  readonly modelName: string;
  readonly modelVersion: number;
  /** `<model>_<group>_<i>`-style instance name, as in Triton's logs. */
  readonly instanceName: string;
  /** Where the instance was placed; a typescript model runs on the CPU unless it uses the GPU itself. */
  readonly kind: 'cpu' | 'gpu';
  /** GPU ordinal for kind 'gpu', -1 for 'cpu'. */
  readonly device: number;
  readonly modelDir: string;
  readonly versionDir: string;
  /** The config's `parameters`, each one's string_value. */
  readonly parameters: Readonly<Record<string, string>>;
  /** The normalized ModelConfig as protobuf JSON (camelCase fields, e.g. parameters.x.stringValue). */
  readonly config: Readonly<Record<string, unknown>>;
  /** The same config serialized, as Triton's Python backend passes `args['model_config']`. */
  readonly modelConfig: string;
}

/** An input as the model sees it. Shapes include the batch dimension when the model batches. */
export interface ModelInputTensor {
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  /** The datatype's typed array; BYTES: one Uint8Array per element. */
  readonly data: ModelTypedArray | Uint8Array[];
}

export interface ModelRequest {
  readonly inputs: Readonly<Record<string, ModelInputTensor>>;
  /** Outputs the client wants; empty means all. The backend drops any others the model returns. */
  readonly requestedOutputs: readonly string[];
  readonly parameters: Readonly<Record<string, ParameterValue>>;
}

/**
 * An output as a model returns it. `data` may be the datatype's typed array, or a plain array: numbers
 * (FP16/BF16 numbers are converted to half precision), bigints or numbers for INT64/UINT64, booleans
 * or 0/1 for BOOL, strings or Uint8Arrays for BYTES. Its element count must match `shape`.
 * The backend copies the data, so a model may return the same array again later.
 */
export interface ModelOutputTensor {
  readonly datatype: Datatype | string;
  readonly shape: readonly number[];
  readonly data: ArrayBufferView | readonly (number | bigint | boolean | string | Uint8Array)[];
}

/** Per-request outcome: outputs by name, or an error that fails only this request (INTERNAL). */
export type ModelResponse = { readonly outputs: Readonly<Record<string, ModelOutputTensor>> } | { readonly error: string };

export interface ModelModule {
  initialize?(args: ModelInitializeArgs): void | Promise<void>;
  execute(requests: ModelRequest[]): ModelResponse[] | Promise<ModelResponse[]>;
  finalize?(): void | Promise<void>;
}
