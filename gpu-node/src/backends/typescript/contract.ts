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
 * Decoupled models (`model_transaction_policy { decoupled: true }` in config.pbtxt, Triton's name) send
 * zero, one or many responses per request through `request.sender` instead of returning them:
 * `sender.send(response)` sends one, `sender.send(response, { final: true })` sends the last one and
 * completes the request, `sender.close()` completes it without a response (Triton's final flag with no
 * response). execute() is awaited; a request the model has not completed when execute() settles is
 * completed then. An `{ error }` response fails the request and completes it. Responses sent after a
 * request completed throw; responses sent after the client went away are dropped (`send` answers false).
 *
 * Every request carries `signal`, aborted when its client goes away (closed stream or connection,
 * passed deadline) while it runs, decoupled or not: a long or streaming execute should stop then.
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
  /** Aborted when the client of this request goes away; the model may stop working on it. */
  readonly signal: AbortSignal;
  /** Decoupled models only: how the model answers this request (see the top of this file). */
  readonly sender?: ResponseSender;
}

/** The response sender of one request of a decoupled model. */
export interface ResponseSender {
  /**
   * Sends one response; with `final: true` it is the last one and completes the request. Answers
   * false when the response was dropped because the client went away; throws once the request is complete.
   */
  send(response: ModelResponse, options?: { readonly final?: boolean }): boolean;
  /** Completes the request without sending a response. Idempotent. */
  close(): void;
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

/**
 * Per-request outcome: outputs by name, or an error that fails only this request: INTERNAL, or with
 * `code: 'INVALID_ARG'` the client's mistake (HTTP 400, gRPC INVALID_ARGUMENT), as Triton's Python
 * backend lets a model pick its TritonError's code.
 */
export type ModelResponse =
  | { readonly outputs: Readonly<Record<string, ModelOutputTensor>> }
  | { readonly error: string; readonly code?: 'INVALID_ARG' };

export interface ModelModule {
  initialize?(args: ModelInitializeArgs): void | Promise<void>;
  /** Decoupled models answer through each request's sender; what they return is ignored. */
  execute(requests: ModelRequest[]): ModelResponse[] | void | Promise<ModelResponse[] | void>;
  finalize?(): void | Promise<void>;
}
