/**
 * What an ensemble needs from the rest of the node: the composing models' configs (to check the
 * ensemble against them when it loads) and their inference. The repository manager implements it with the
 * same resolve → validate → infer path the protocol servers use, so a step's request is queued and
 * batched by the composing model's own scheduler together with direct traffic (and other ensembles),
 * and the composing model's statistics count it like any request.
 */
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { InferRequest, InferResponse } from '../../../shared/src/tensors/index.js';
import type { Cancellable } from '../scheduler/call-cancellation.js';

/** Told of each response of a decoupled step, with whether the model flagged it final. */
export type StepResponseListener = (response: InferResponse, final: boolean) => void;

export interface ComposingModels {
  /**
   * The config of the READY version a step names (`version` undefined = the latest READY one); throws
   * the manager's NOT_FOUND / UNAVAILABLE error when there is none.
   */
  config(name: string, version?: string): ModelConfig;
  /**
   * Whether the READY version a step names streams its responses (a decoupled model, or an ensemble
   * whose last step is one); throws as `config` does.
   */
  decoupled(name: string, version?: string): boolean;
  /**
   * Resolves, validates and runs one request on a composing model; throws TesseraError. A decoupled
   * model's responses go to `onResponse` (the promise then resolves with no outputs once it completes);
   * without one such a model is refused.
   */
  infer(request: InferRequest, signal?: Cancellable, onResponse?: StepResponseListener): Promise<InferResponse>;
}
