/**
 * SequenceAffinity in this process (embedded mode, one gateway): a Map with expiry times. Expired
 * entries are dropped when read, and all of them every `sweepEvery` writes, so abandoned sequences
 * cannot pile up.
 */
import type { SequenceAffinity, SequenceBinding, SequenceRef } from '../../core/ports/index.js';

export interface MemorySequenceAffinityOptions {
  /** Clock; default Date.now. */
  readonly now?: () => number;
  /** Writes between two sweeps of expired entries; default 1000. */
  readonly sweepEvery?: number;
}

export function createMemorySequenceAffinity(options: MemorySequenceAffinityOptions = {}): SequenceAffinity & { readonly size: number } {
  const now = options.now ?? Date.now;
  const sweepEvery = options.sweepEvery ?? 1000;
  const entries = new Map<string, { binding: SequenceBinding; expiresAt: number }>();
  let writes = 0;
  // JSON of the triple: no separator inside a model name or string id can make two keys equal.
  const keyOf = (ref: SequenceRef): string => JSON.stringify([ref.tenantId, ref.model, ref.sequenceId]);
  const sweep = (): void => {
    const t = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= t) entries.delete(key);
  };
  return {
    get size() {
      return entries.size;
    },
    async get(ref, refreshTtlMs) {
      const key = keyOf(ref);
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      if (refreshTtlMs !== undefined) entry.expiresAt = now() + refreshTtlMs;
      return entry.binding;
    },
    async set(ref, binding, ttlMs) {
      entries.set(keyOf(ref), { binding, expiresAt: now() + ttlMs });
      if (++writes % sweepEvery === 0) sweep();
    },
    async delete(ref) {
      entries.delete(keyOf(ref));
    },
  };
}
