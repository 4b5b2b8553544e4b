/**
 * The SequenceAffinity port: which node holds a sequence. A stateful model (Triton's sequence batcher)
 * keeps a sequence's state on the node that got its START, so every later request of the sequence must
 * go there. The record is shared by all gateway replicas (Redis adapter) or kept in this process
 * (memory adapter, embedded mode), and it expires by itself: a sequence whose client went silent
 * leaves nothing behind.
 */

/** One sequence of one tenant and model. Tenant A's sequence 5 is not tenant B's. */
export interface SequenceRef {
  readonly tenantId: string;
  readonly model: string;
  /** Canonical id (sequence-params.ts): `u:<decimal>` for a numeric id, `s:<string>` for a string one. */
  readonly sequenceId: string;
}

/** Where the sequence lives. */
export interface SequenceBinding {
  readonly nodeId: string;
  /** The model version that answered the START, so a traffic split cannot move the sequence; absent when unknown. */
  readonly version?: string;
}

export interface SequenceAffinity {
  /** The binding, or undefined when none (never set, deleted or expired). With `refreshTtlMs`, also extends its TTL. */
  get(ref: SequenceRef, refreshTtlMs?: number): Promise<SequenceBinding | undefined>;
  /** Records (or replaces) the binding for `ttlMs`. */
  set(ref: SequenceRef, binding: SequenceBinding, ttlMs: number): Promise<void>;
  /** Forgets the binding; nothing happens when there is none. */
  delete(ref: SequenceRef): Promise<void>;
}

/** The bytes of the hashing key of node-level sequence ids (core/sequences/node-sequence-id.ts), asked for once (lazily) and kept. */
export type SequenceIdKeySource = () => Promise<Uint8Array>;
