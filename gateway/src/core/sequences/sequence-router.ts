/**
 * Sequence affinity as the dispatcher uses it (dispatcher.ts calls these at the points named):
 *
 * - START: the request is routed like any other (p2c); the node that answered is recorded
 *   (`started`) with the binding TTL (sequence-ttl.ts). START + END in one request records nothing.
 * - any other request: `lookup` before admission (also extends the TTL). No binding → INVALID_ARG
 *   ("…not known to the gateway: send sequence_start first"). The request then goes to that node only,
 *   never retried elsewhere (the state lives there). If the node is gone (not in the directory, its
 *   breaker open, or the call failed before the node accepted it) → UNAVAILABLE ("…is gone; start the
 *   sequence again") and the binding is deleted (`gone`); a new START may go anywhere.
 * - END: the binding is deleted after the answer (`ended`).
 *
 * The store failing: a lookup or a START's record fails with UNAVAILABLE (retry later); deleting at
 * END or on `gone` is best effort (the binding expires anyway).
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { SequenceAffinity, SequenceBinding, SequenceIdKeySource, SequenceRef } from '../ports/index.js';
import { readSequenceParams, type SequenceParams } from './sequence-params.js';
import { SequenceTtl, type SequenceTtlOptions } from './sequence-ttl.js';

export interface SequenceRoutingOptions extends SequenceTtlOptions {
  /** Where bindings live: Redis (shared by all gateways) or this process (embedded mode). */
  readonly store: SequenceAffinity;
  /**
   * The key of the node-level sequence ids (node-sequence-id.ts); every gateway replica must use the
   * same one. Default: a random key of this process (right for one gateway only).
   */
  readonly idKey?: SequenceIdKeySource;
}

/** A sequence request being routed. */
export interface SequenceRequest extends SequenceParams {
  readonly ref: SequenceRef;
}

/** Retry-After of a failing store. */
const STORE_RETRY_AFTER_MS = 1000;

export class SequenceRouter {
  private readonly store: SequenceAffinity;
  private readonly ttl: SequenceTtl;

  constructor(options: SequenceRoutingOptions, now: () => number) {
    this.store = options.store;
    this.ttl = new SequenceTtl(options, now);
  }

  /** The request's sequence in the tenant scope (core/auth/tenant-scope.ts), or undefined when it is not in one. Malformed parameters: INVALID_ARG. */
  read(tenantId: string, request: InferRequest): SequenceRequest | undefined {
    const params = readSequenceParams(request.parameters);
    return params === undefined ? undefined : { ...params, ref: { tenantId, model: request.modelName, sequenceId: params.id } };
  }

  /** The node holding a non-START request's sequence (TTL extended), or INVALID_ARG when none. */
  async lookup(seq: SequenceRequest): Promise<SequenceBinding> {
    let binding: SequenceBinding | undefined;
    try {
      binding = await this.store.get(seq.ref, this.ttl.ttlMs(seq.ref.model));
    } catch (error) {
      throw storeError('find', seq, error);
    }
    if (binding === undefined) {
      throw TesseraError.invalidArg(`sequence ${seq.display} of model '${seq.ref.model}' is not known to the gateway: send sequence_start first`);
    }
    return binding;
  }

  /**
   * After a START was answered by `binding.nodeId`. `fetchConfig` reads the model's config from that
   * node, to learn the idle time in the background.
   */
  async started(seq: SequenceRequest, binding: SequenceBinding, fetchConfig: () => Promise<unknown>): Promise<void> {
    this.ttl.learn(seq.ref.model, fetchConfig);
    try {
      if (seq.end) await this.store.delete(seq.ref);
      else await this.store.set(seq.ref, binding, this.ttl.ttlMs(seq.ref.model));
    } catch (error) {
      throw storeError('record', seq, error);
    }
  }

  /** After an END was answered. */
  async ended(seq: SequenceRequest): Promise<void> {
    await this.store.delete(seq.ref).catch(() => undefined);
  }

  /** The error for a sequence whose node is gone; forgets the binding (in the background). */
  gone(seq: SequenceRequest, cause?: unknown): TesseraError {
    void this.store.delete(seq.ref).catch(() => undefined);
    const why = cause === undefined ? '' : ` (${toTesseraError(cause).message})`;
    return new TesseraError(
      'UNAVAILABLE',
      `the node holding sequence ${seq.display} of model '${seq.ref.model}' is gone${why}; start the sequence again`,
      { ...(cause === undefined ? {} : { cause }) },
    );
  }

  /** The binding TTL of `model` now (ms). */
  ttlMs(model: string): number {
    return this.ttl.ttlMs(model);
  }
}

function storeError(what: 'find' | 'record', seq: SequenceRequest, error: unknown): TesseraError {
  return new TesseraError(
    'UNAVAILABLE',
    `cannot ${what} sequence ${seq.display} of model '${seq.ref.model}': the sequence store failed (${toTesseraError(error).message})`,
    { retryAfterMs: STORE_RETRY_AFTER_MS, cause: error },
  );
}
