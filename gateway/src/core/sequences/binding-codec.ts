// The stored form of a SequenceBinding (core/ports/sequence-affinity.ts), shared by the adapters.
import type { SequenceBinding } from '../ports/index.js';

/** Compact JSON. */
export function encodeBinding(binding: SequenceBinding): string {
  return JSON.stringify(binding.version === undefined ? { n: binding.nodeId } : { n: binding.nodeId, v: binding.version });
}

/** A stored binding, or undefined when the value is not one of ours (treated as no binding). */
export function decodeBinding(value: string | null | undefined): SequenceBinding | undefined {
  if (value === null || value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as { n?: unknown; v?: unknown };
    if (typeof parsed.n !== 'string' || parsed.n === '') return undefined;
    return typeof parsed.v === 'string' ? { nodeId: parsed.n, version: parsed.v } : { nodeId: parsed.n };
  } catch {
    return undefined;
  }
}
