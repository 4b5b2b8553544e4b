/** The response cache store. Keys are computed by the core (shared/ cache-key function), never by adapters. */
export interface CachedResponse {
  /** Encoded KServe v2 response body and the headers needed to replay it. */
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** Node compute time the original response cost, in microseconds (for "compute saved" metrics). */
  readonly computeUs: number;
  readonly storedAt: number;
}

/** An entry as `get` finds it. */
export interface StoredResponse extends CachedResponse {
  /**
   * How long the store will keep this entry at most, in ms counted from the moment `get` was called;
   * undefined when the store cannot tell. The core's in-process copy of the entry (L1) never outlives
   * this, so a store that cannot tell gets no copy.
   */
  readonly remainingMs?: number;
}

export interface ResponseCache {
  /** Undefined on a miss. Throws when the store is unreachable (the core then bypasses the cache). */
  get(key: string): Promise<StoredResponse | undefined>;
  /** Stores with a TTL in seconds. Throws when the store is unreachable. */
  set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void>;
}
