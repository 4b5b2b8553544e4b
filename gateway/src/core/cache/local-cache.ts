/**
 * Cached responses in process memory, synchronous: an LRU bounded by bytes, each entry with an
 * absolute expiry. Two users: the cache layer's L1 in front of a shared store (cache-layer.ts), and
 * the in-process ResponseCache of embedded mode (adapters/cache/memory-response-cache.ts).
 *
 * Like Triton's `local` cache it is bounded by a byte budget and evicts the least recently used
 * entries (a read refreshes recency); unlike it, entries also expire. A Map keeps insertion order, so
 * "move to the end" on every read makes its first key the least recently used one. Expired entries
 * are dropped when read, when eviction reaches them, and from the front of the map as new entries
 * arrive (a few per `set`): the L1 gives every entry about the same short lifetime, so the front is
 * where the dead ones are, and without that sweep a stream of one-off responses would fill the whole
 * budget with expired entries (the soak saw the gateway's RSS climb by its 64 MiB budget). Each entry
 * is charged its body, key and header bytes plus a fixed overhead, so a flood of tiny entries cannot
 * exceed the budget by bookkeeping alone.
 */
import type { CachedResponse } from '../ports/index.js';

const ENTRY_OVERHEAD_BYTES = 128;
/** Expired entries dropped from the front per `set`: more than one, so the sweep outpaces arrivals. */
const SWEEP_PER_SET = 8;

interface Entry {
  readonly value: CachedResponse;
  /** Served while `now < expiresAt`. */
  readonly expiresAt: number;
  readonly charge: number;
}

export class LocalCache {
  private readonly entries = new Map<string, Entry>();
  private charged = 0;

  /** `maxBytes`: the budget of all entries; an entry bigger than it is not stored. */
  constructor(private readonly maxBytes: number) {}

  /** Entries held now (expired ones not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes charged now. */
  get bytes(): number {
    return this.charged;
  }

  /** The live entry, now the most recently used; undefined when absent or expired at `now`. */
  get(key: string, now: number): CachedResponse | undefined {
    const entry = this.live(key, now);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The live entry without touching its recency. */
  peek(key: string, now: number): CachedResponse | undefined {
    return this.live(key, now)?.value;
  }

  /**
   * Replaces the entry of `key` with a private copy of `value` (the caller's buffer may be reused after
   * it is served), served until `expiresAt`. An entry already expired at `now`, or bigger than the
   * whole budget, is not stored; the old one is dropped anyway. Evicts the least recently used
   * entries to stay within the budget.
   */
  set(key: string, value: CachedResponse, expiresAt: number, now: number): void {
    this.delete(key);
    this.sweepExpired(now);
    if (!(expiresAt > now)) return;
    const charge = chargeOf(key, value);
    if (charge > this.maxBytes) return;
    // Only the entry's own fields (not whatever else the object carries), and new Uint8Array(view)
    // copies (Buffer#slice would not).
    const stored: CachedResponse = {
      body: new Uint8Array(value.body),
      headers: { ...value.headers },
      computeUs: value.computeUs,
      storedAt: value.storedAt,
    };
    this.entries.set(key, { value: stored, expiresAt, charge });
    this.charged += charge;
    for (const oldest of this.entries.keys()) {
      if (this.charged <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.charged -= entry.charge;
  }

  /** How long the entry of `key` is still served, in ms; undefined when absent or expired. */
  remainingMs(key: string, now: number): number | undefined {
    const entry = this.live(key, now);
    return entry === undefined ? undefined : entry.expiresAt - now;
  }

  /** Drops expired entries from the front (least recently used first), stopping at a live one. */
  private sweepExpired(now: number): void {
    let budget = SWEEP_PER_SET;
    for (const [key, entry] of this.entries) {
      if (budget-- === 0 || now < entry.expiresAt) return;
      this.delete(key);
    }
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (now >= entry.expiresAt) {
      this.delete(key);
      return undefined;
    }
    return entry;
  }
}

function chargeOf(key: string, value: CachedResponse): number {
  let charge = ENTRY_OVERHEAD_BYTES + key.length * 2 + value.body.byteLength;
  for (const [name, text] of Object.entries(value.headers)) charge += (name.length + text.length) * 2;
  return charge;
}
