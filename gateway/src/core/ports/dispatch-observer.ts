// What the dispatcher tells metrics besides admission (the adapter implements it).
import type { ErrorCode } from '../../../../shared/src/errors/index.js';
import type { AdmissionObserver } from './admission-observer.js';

export interface UpstreamEvent {
  readonly model: string;
  readonly nodeId: string;
  /** 'OK' or the error code of the call. */
  readonly outcome: 'OK' | ErrorCode;
  readonly durationMs: number;
  /** True for the one retry after a `notAccepted` failure. */
  readonly retry: boolean;
}

export interface DispatchObserver extends AdmissionObserver {
  /** Every upstream infer call, after it settled. */
  upstream?(event: UpstreamEvent): void;
}
