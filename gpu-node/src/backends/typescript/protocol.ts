/** What the typescript backend and its worker threads say to each other (payloads of worker/protocol.ts). */
import type { Parameters } from '../../../../shared/src/tensors/index.js';
import type { WireOutcome, WireTensor, WorkerTimings } from '../worker/protocol.js';
import type { ModelInitializeArgs } from './contract.js';

export interface TsInit {
  readonly modelPath: string;
  readonly args: ModelInitializeArgs;
}

export interface TsWireRequest {
  readonly inputs: readonly WireTensor[];
  readonly requestedOutputs: readonly string[];
  readonly parameters: Parameters;
}

export interface TsExecuteBody {
  readonly requests: readonly TsWireRequest[];
}

export type TsWireResponse = WireOutcome;

/** inferNs: the model's execute() alone. */
export interface TsExecuteReply extends WorkerTimings {
  readonly responses: readonly TsWireResponse[];
}

/** A `partial` message body: one response of request `index` of a decoupled model. */
export interface TsPartial {
  readonly index: number;
  readonly outputs: readonly WireTensor[];
  readonly final: boolean;
}
