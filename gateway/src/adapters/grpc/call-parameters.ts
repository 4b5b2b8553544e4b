/**
 * Triton's `priority` and `timeout` request parameters as the node's batcher reads them: the
 * dispatcher computed them from the tenant's tier and the deadline, so they replace the client's own.
 */
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { UpstreamCallOptions } from '../../core/ports/index.js';

/** The request as the node gets it: `priority` and `timeout` (µs) from the call options, when given. */
export function withCallParameters(request: InferRequest, opts: UpstreamCallOptions): InferRequest {
  const parameters = { ...request.parameters };
  if (opts.priority !== undefined) parameters.priority = opts.priority;
  if (opts.timeoutUs !== undefined) parameters.timeout = opts.timeoutUs;
  return { ...request, parameters };
}
