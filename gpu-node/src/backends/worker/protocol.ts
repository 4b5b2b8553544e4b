/**
 * The messages between an instance's host object (main thread) and its worker thread. One `execute`
 * message carries a whole batch and is answered by exactly one `reply` or `failed` with the same id;
 * tensors travel as ArrayBuffers listed in the transfer list, so they move instead of being copied.
 */
import type { Datatype } from '../../../../shared/src/tensors/index.js';
import type { ErrorCode } from '../../../../shared/src/errors/index.js';

/** What `workerData` holds: the module to run in the thread and its init payload. */
export interface WorkerBoot<Init = unknown> {
  /** `file:` URL of the worker module (a `.ts` file is imported through shared/src/workers/tsx-bootstrap.mjs). */
  readonly entry: string;
  readonly init: Init;
}

/** A TesseraError flattened for postMessage (Error subclasses lose their fields in structured clone). */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
}

/**
 * A tensor crossing the thread boundary. `data` is a whole ArrayBuffer (offset 0) so it can be
 * transferred; BYTES data keeps the length-prefixed form.
 */
export interface WireTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly data: ArrayBuffer;
}

/** What one unit of an execute (a session run, a model request) comes back as: its outputs or its own error. */
export type WireOutcome = { readonly outputs: readonly WireTensor[] } | { readonly error: WireError };

/** The worker's share of an execute's time, measured in the worker thread; every reply body carries it. */
export interface WorkerTimings {
  /** Converting wire inputs to what the model takes. */
  readonly inputNs: number;
  /** The model's own work alone (session.run, a module's execute()). */
  readonly inferNs: number;
  /** Converting the model's outputs back to wire tensors. */
  readonly outputNs: number;
}

/**
 * `cancel`: the client of request `index` of batch `id` went away; the worker aborts that request's
 * signal at once (it is not queued behind executes).
 */
export type HostMessage =
  | { readonly type: 'execute'; readonly id: number; readonly body: unknown }
  | { readonly type: 'cancel'; readonly id: number; readonly index: number }
  | { readonly type: 'close' };

export type WorkerMessage =
  | { readonly type: 'ready'; readonly info: unknown }
  | { readonly type: 'init-failed'; readonly error: WireError }
  | { readonly type: 'reply'; readonly id: number; readonly body: unknown }
  /** A response sent before the batch's reply (decoupled models); any number per batch, before `reply`. */
  | { readonly type: 'partial'; readonly id: number; readonly body: unknown }
  | { readonly type: 'failed'; readonly id: number; readonly error: WireError }
  | { readonly type: 'closed' };

/**
 * A pooled worker thread (worker-pool.ts) hosts many sessions (instances), each opened with its own
 * init payload and named by a number the host picks. Batch ids are unique per thread, so `cancel`,
 * `reply`, `partial` and `failed` are the single-instance messages above, unchanged.
 */
export type PoolHostMessage =
  | { readonly type: 'open'; readonly session: number; readonly init: unknown }
  | { readonly type: 'execute'; readonly session: number; readonly id: number; readonly body: unknown }
  | { readonly type: 'cancel'; readonly id: number; readonly index: number }
  | { readonly type: 'release'; readonly session: number };

export type PoolWorkerMessage =
  | { readonly type: 'opened'; readonly session: number; readonly info: unknown }
  | { readonly type: 'open-failed'; readonly session: number; readonly error: WireError }
  | { readonly type: 'reply'; readonly id: number; readonly body: unknown }
  | { readonly type: 'partial'; readonly id: number; readonly body: unknown }
  | { readonly type: 'failed'; readonly id: number; readonly error: WireError }
  | { readonly type: 'released'; readonly session: number };
