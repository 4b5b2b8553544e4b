/**
 * The seam for `--rate-limit=execution_count` (reference 4.5). Without a gate, the lowest-numbered idle
 * instance takes a batch the moment it is formed (`--rate-limit=off`). With one, a formed batch also
 * needs the gate's permission — resources and a fair turn among all models — and the gate picks which
 * idle instance runs it.
 */
export interface GateGrant {
  readonly instance: number;
  /** Returns the instance's resources; called once, when its execution finishes. */
  readonly release: () => void;
}

export interface InstanceGate {
  /**
   * The batcher has a batch ready and these instances idle. Returns a grant to start now, or undefined:
   * the request stays staged and the gate calls the batcher's `wake` when it may be granted.
   */
  tryAcquire(idleInstances: readonly number[]): GateGrant | undefined;
  /** The batcher no longer has a batch ready (requests left, or it chose to wait): unstage it. */
  withdraw(): void;
}

/** Builds the gate for one batcher; `wake` makes the batcher re-evaluate (and call tryAcquire again). */
export type InstanceGateFactory = (wake: () => void) => InstanceGate;
