/**
 * The dispatcher's sequence requests (`sequence_id`). Every sequence id is replaced by a node-level
 * id of the tenant's own (core/sequences/node-sequence-id.ts): two tenants using the same id never
 * share a sequence on a node; the client's id is put back into the answer and into error messages.
 * With affinity (core/sequences/sequence-router.ts) a START is admitted like any request and its node
 * recorded; every later request of the sequence goes to that node only (its version too), is never
 * retried elsewhere, and fails clearly when the node is gone.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { readSequenceParams, type NodeSequenceIds, type SequenceRequest, type SequenceRouter } from '../sequences/index.js';
import type { Clock, DispatchContext, NodeTransport, NodeView, SequenceBinding, UpstreamInferResult } from '../ports/index.js';
import { isNotAccepted } from './upstream-errors.js';

/** Deadline of the background config read that learns a sequence model's idle time. */
const SEQUENCE_CONFIG_TIMEOUT_MS = 5000;

/** What a sequence request adds to a dispatch. */
export interface SequencePin {
  /** A non-START request: the node (and version) holding the sequence; no other node, no retry. */
  readonly binding?: SequenceBinding;
  /** The error when that node is gone by the time the request leaves the queue. */
  readonly gone?: () => TesseraError;
  /** Told which node answered (a START's binding). */
  readonly answered?: (node: NodeView) => void;
}

export interface SequenceDispatchOptions {
  readonly router: SequenceRouter | undefined;
  readonly nodeSequenceIds: NodeSequenceIds;
  readonly transport: NodeTransport;
  readonly clock: Clock;
  /** Version choice, admission, node choice and the upstream call (the dispatcher's). */
  readonly admit: (request: InferRequest, ctx: DispatchContext, pin?: SequencePin) => Promise<UpstreamInferResult>;
  /** The node holding a sequence while it can still be reached. */
  readonly holder: (nodeId: string, model: string) => NodeView | undefined;
}

export type SequenceDispatch = (request: InferRequest, ctx: DispatchContext, scope: string, display: string, seq: SequenceRequest | undefined) => Promise<UpstreamInferResult>;

export function createSequenceDispatch(options: SequenceDispatchOptions): SequenceDispatch {
  const { nodeSequenceIds, transport, clock, admit, holder } = options;

  /** A request of a sequence with affinity: a START records its node, the rest follow it. */
  async function dispatchSequence(request: InferRequest, ctx: DispatchContext, seq: SequenceRequest): Promise<UpstreamInferResult> {
    const router = options.router!;
    const model = request.modelName;
    if (seq.start) {
      const answered: { node?: NodeView } = {};
      const result = await admit(request, ctx, { answered: (node) => (answered.node = node) });
      const node = answered.node!;
      const version = result.response.modelVersion === '' ? undefined : result.response.modelVersion;
      await router.started(seq, { nodeId: node.id, ...(version === undefined ? {} : { version }) }, () =>
        transport.modelConfig(node, model, version, { deadline: clock.now() + SEQUENCE_CONFIG_TIMEOUT_MS }),
      );
      return result;
    }
    const binding = await router.lookup(seq);
    if (holder(binding.nodeId, model) === undefined) throw router.gone(seq);
    let result: UpstreamInferResult;
    try {
      result = await admit(request, ctx, { binding, gone: () => router.gone(seq) });
    } catch (error) {
      // Refused before the node took it (down, unreachable, breaker open): the state is out of reach.
      throw isNotAccepted(error) ? router.gone(seq, error) : error;
    }
    if (seq.end) await router.ended(seq);
    return result;
  }

  return async (request, ctx, scope, display, seq) => {
    const canonical = seq?.id ?? readSequenceParams(request.parameters)!.id;
    const original = request.parameters.sequence_id!;
    let nodeId: bigint;
    try {
      nodeId = await nodeSequenceIds.nodeId(scope, canonical);
    } catch (error) {
      throw new TesseraError('UNAVAILABLE', `cannot route sequence ${display}: the sequence id key is not available (${toTesseraError(error).message})`, {
        retryAfterMs: 1000,
        cause: error,
      });
    }
    // The client's id type goes on (a TYPE_STRING CORRID needs a string id), never its value.
    const forwardedId = typeof original === 'string' ? String(nodeId) : nodeId;
    const forwarded: InferRequest = { ...request, parameters: { ...request.parameters, sequence_id: forwardedId } };
    const nodeText = String(nodeId);
    try {
      const result = seq === undefined ? await admit(forwarded, ctx) : await dispatchSequence(forwarded, ctx, seq);
      const params = result.response.parameters;
      if (params === undefined || !Object.hasOwn(params, 'sequence_id')) return result;
      return { ...result, response: { ...result.response, parameters: { ...params, sequence_id: original } } };
    } catch (error) {
      const tessera = toTesseraError(error);
      if (tessera.message.includes(nodeText)) {
        Object.defineProperty(tessera, 'message', { value: tessera.message.replaceAll(nodeText, display), configurable: true, writable: true });
      }
      throw tessera;
    }
  };
}
