// Reading and setting the UpstreamErrorDetails (core/ports/routing.ts) a transport attaches to its errors.
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { UpstreamErrorDetails } from '../ports/index.js';

export function upstreamDetails(error: unknown): UpstreamErrorDetails {
  return typeof error === 'object' && error !== null ? (error as UpstreamErrorDetails) : {};
}

export function isNotAccepted(error: unknown): boolean {
  return upstreamDetails(error).notAccepted === true;
}

/** Marks a TesseraError as a failure before the node accepted the request. */
export function markNotAccepted<E extends TesseraError>(error: E, notAccepted = true): E & UpstreamErrorDetails {
  return Object.assign(error, { notAccepted });
}

/**
 * A deadline that passed while a node held the request. The node has the same deadline, so its timer or
 * the gateway's may fire first; every transport words both the same.
 */
export function deadlineBeforeAnswer(nodeId: string): TesseraError {
  return TesseraError.deadlineExceeded(`the request deadline passed before node '${nodeId}' answered`);
}
