/**
 * The batch answers both kinds of worker thread send (protocol.ts: `reply`, `partial`, `failed`), handed to
 * the batch waiting for them: a per-instance thread (instance-worker.ts) and a pooled one (pool-thread.ts).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { WireError, WorkerMessage } from './protocol.js';

export type BatchAnswer = Extract<WorkerMessage, { readonly type: 'reply' | 'partial' | 'failed' }>;

export interface PendingBatch {
  resolve(body: unknown): void;
  reject(error: TesseraError): void;
  onPartial?: (body: unknown) => void;
}

export function fromWire(error: WireError): TesseraError {
  return new TesseraError(error.code, error.message);
}

/** Settles (or, for `partial`, informs) the batch `message` answers; an unknown or settled id is ignored. */
export function deliverBatchAnswer<P extends PendingBatch>(pending: Map<number, P>, message: BatchAnswer): void {
  if (message.type === 'partial') {
    try {
      pending.get(message.id)?.onPartial?.(message.body);
    } catch {
      // The consumer's failure (a closed stream) is its own; it must not take the message loop down.
    }
    return;
  }
  const batch = pending.get(message.id);
  if (batch === undefined) return;
  pending.delete(message.id);
  if (message.type === 'reply') batch.resolve(message.body);
  else batch.reject(fromWire(message.error));
}
