/**
 * Which inference requests the response cache may answer, and which request parameters do not
 * change a response (so they stay out of the cache key).
 *
 * Triton refuses `response_cache` on sequence-batched and decoupled models at config validation
 * (triton-protocol.md §6.3). The model-level switch is the gateway's business (model config +
 * gateway config); this module judges the request itself, so that a sequence request is never
 * cached even when it reaches a model whose config says otherwise.
 */
import type { InferRequest } from '../tensors/index.js';

/**
 * Request parameters that a response does not depend on, left out of the key:
 * - `priority`, `timeout`: scheduling only (which queue, how long to wait), never the result;
 * - `binary_data_output`: covered by the per-output binary flags the key hashes instead (the HTTP
 *   codec removes it from `parameters`, but a request built elsewhere may still carry it).
 * Every other parameter, including custom ones and `headers`, reaches the backend and is hashed.
 */
export const CACHE_KEY_IGNORED_PARAMETERS: readonly string[] = Object.freeze(['priority', 'timeout', 'binary_data_output']);

/** Parameters that make a request part of a sequence: stateful, so never cached. */
export const SEQUENCE_PARAMETERS: readonly string[] = Object.freeze(['sequence_id', 'sequence_start', 'sequence_end']);

/**
 * Why a request cannot be cached, or undefined when it can. A sequence request is refused as soon as
 * it carries any `sequence_*` parameter, even `sequence_id: 0`: being conservative costs a miss,
 * being wrong would replay another step's state.
 */
export function uncacheableReason(request: InferRequest): string | undefined {
  for (const name of SEQUENCE_PARAMETERS) {
    if (Object.hasOwn(request.parameters, name)) {
      return `sequence requests are not cacheable (parameter '${name}')`;
    }
  }
  return undefined;
}

/** True when the response to this request may be cached (see `uncacheableReason`). */
export function isCacheable(request: InferRequest): boolean {
  return uncacheableReason(request) === undefined;
}
