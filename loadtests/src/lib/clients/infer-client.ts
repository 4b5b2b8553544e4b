/** What the closed-loop driver needs from a protocol client; one implementation per protocol. */
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { CallTiming } from '../load/closed-loop.js';

export interface InferResult extends CallTiming {
  readonly response: InferResponse;
}

export interface InferClient {
  readonly protocol: 'http' | 'grpc';
  /** Rejects on a transport error or an error answer. */
  infer(request: InferRequest): Promise<InferResult>;
  close(): Promise<void>;
}
