/** What the typescript backend and its worker threads say to each other (payloads of worker/protocol.ts). */
import type { Parameters } from '../../../../shared/src/tensors/index.js';
import type { WireError, WireTensor } from '../worker/protocol.js';
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

export type TsWireResponse = { readonly outputs: readonly WireTensor[] } | { readonly error: WireError };

export interface TsExecuteReply {
  readonly responses: readonly TsWireResponse[];
  readonly inputNs: number;
  /** The model's execute() alone. */
  readonly inferNs: number;
  readonly outputNs: number;
}
