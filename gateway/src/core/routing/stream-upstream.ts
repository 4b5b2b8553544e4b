/**
 * The upstream call of a decoupled model's request (DispatchContext.onResponse): the transport's
 * streaming call when it has one. A transport without one (HTTP to nodes on Workers) cannot carry
 * many responses per request: the request fails UNSUPPORTED, naming why, rather than as a unary call
 * the node would refuse.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { NodeTransport, NodeView, UpstreamCallOptions, UpstreamInferResult } from '../ports/index.js';

export function streamUpstream(
  transport: NodeTransport,
  node: NodeView,
  request: InferRequest,
  options: UpstreamCallOptions,
  onResponse: (response: InferResponse) => void,
): Promise<UpstreamInferResult> {
  if (transport.streamInfer === undefined) {
    return Promise.reject(
      Object.assign(TesseraError.unsupported(`model '${request.modelName}' is decoupled, and this gateway's node transport cannot stream its responses`), { notAccepted: false }),
    );
  }
  return transport.streamInfer(node, request, options, onResponse);
}
