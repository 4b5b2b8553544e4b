/**
 * The node's load report riding on every answer's trailing metadata (success and failure): the
 * router refreshes its figures for the node from it between the node's own reports.
 */
import { loadFigure } from '../fleet/index.js';
import type { NodeLoad } from './grpc-errors.js';

export const QUEUE_DEPTH_TRAILER = 'tessera-queue-depth';
export const INFLIGHT_TRAILER = 'tessera-inflight';

/** Both figures, or undefined when either is missing or not a plain count. */
export function loadFromTrailer(queued: unknown, inflight: unknown): NodeLoad | undefined {
  const q = loadFigure(queued);
  const i = loadFigure(inflight);
  return q === undefined || i === undefined ? undefined : { queued: q, inflight: i };
}
