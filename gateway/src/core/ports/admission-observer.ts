/**
 * What admission tells metrics (the core never imports a metrics SDK; the adapter implements this).
 */

/**
 * Why a request left the admission queue without being dispatched:
 * - `queue_full`: the model's queue was full and no lower tier could be evicted.
 * - `share_full`: the request's tier already held its share of the queue.
 * - `deadline`: the estimated wait plus execution would end after the deadline (fast rejection).
 * - `expired`: the deadline passed while the request waited.
 * - `evicted`: a higher tier needed the place of this (the newest of the lowest tier) entry.
 * - `no_capacity`: no node can serve the model now (all draining, stale or behind open breakers).
 * - `cancelled`: the client went away while the request waited.
 * - `closed`: the gateway is shutting down.
 */
export type AdmissionRejectReason =
  | 'queue_full'
  | 'share_full'
  | 'deadline'
  | 'expired'
  | 'evicted'
  | 'no_capacity'
  | 'cancelled'
  | 'closed';

export interface AdmissionObserver {
  /** A request left the queue for a node after `waitMs` in the queue (0 when dispatched at once). */
  dispatched?(model: string, tier: string, waitMs: number): void;
  /** A request was refused or dropped by admission. */
  rejected?(model: string, tier: string, reason: AdmissionRejectReason): void;
}
