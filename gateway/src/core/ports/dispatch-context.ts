/**
 * What travels with one request from the app to the dispatcher (admission, routing, the upstream
 * call). Declared once here, between the two: the app builds it and the dispatcher reads it.
 */
import type { CancelSignal } from '../http/cancellation.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import type { TraceScope } from '../../../../shared/src/tracing/index.js';
import type { Tier } from './tenants.js';

export interface DispatchContext {
  readonly tenantId: string;
  /**
   * The tenant's scope (core/auth/tenant-scope.ts: id + generation) that sequence bindings and the
   * node-side sequence ids are derived from; default `tenantId`.
   */
  readonly tenantScope?: string;
  readonly tier: Tier;
  /** Absolute deadline, ms since the epoch: the tier's queue timeout or a shorter client deadline. */
  readonly deadline: number;
  /** The client's disconnect; cancels the wait in the queue and the upstream call. */
  readonly signal?: CancelSignal;
  /** Request headers, read only for a model's sticky-version header. */
  readonly headers?: { get(name: string): string | null };
  /** Spans `admission` (the wait in the queue) and `upstream` (each node call) hang here; default none. */
  readonly trace?: TraceScope;
  /** Set for a decoupled model's request: streamed upstream, each response handed over as it arrives. */
  readonly onResponse?: (response: InferResponse) => void;
  /** With `onResponse`: the upstream stream's deadline (a generation outlives the queue timeout that `deadline` bounds). */
  readonly streamDeadline?: number;
}

/** Metadata calls need only a deadline and the client's signal. */
export type MetadataContext = Pick<DispatchContext, 'deadline' | 'signal'>;
