/**
 * Spill-over: an infer request sent with `Prefer: respond-async, spill-over` that admission refuses
 * for its queue timeout becomes a job (202) instead of a 503. Only the two queue-timeout refusals
 * spill: the up-front estimate (`deadline`: it could not be answered before the tier's deadline) and
 * the wait that ran out (`expired`). Both happen before any node saw the request, so the job is its
 * only run. A full queue, a tier over its share, no node at all, or a client that left do not spill:
 * a job would meet the same wall, or nobody would read it.
 */
import { admissionRejectReasonOf } from '../admission/index.js';

export function isQueueTimeoutRejection(error: unknown): boolean {
  const reason = admissionRejectReasonOf(error);
  return reason === 'deadline' || reason === 'expired';
}
