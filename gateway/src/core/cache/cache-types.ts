/** The vocabulary of the gateway's response cache layer: policies, outcomes and the metrics observer. */
import type { CancelSignal, Cancellation } from '../http/cancellation.js';

/** What the client's `Cache-Control` asks for (see `parseCacheControl`). */
export type CacheDirective = 'default' | 'no-cache' | 'no-store';

/** The `x-cache` header value of every inference response that went through the layer. */
export type CacheStatus = 'HIT' | 'MISS' | 'BYPASS';

export interface CachePolicy {
  /** From the tenant's tier (`Tier.cacheTtlSeconds`); 0 (or less) disables caching: BYPASS. */
  readonly ttlSeconds: number;
  readonly directive: CacheDirective;
}

/** Metric labels of one request. */
export interface CacheLabels {
  readonly tenant: string;
  readonly model: string;
  readonly version: string;
}

/** What the layer's `produce` callback returns: the encoded response of one upstream call. */
export interface ProducedResponse {
  /** The encoded KServe v2 body, WITHOUT the request id (see `withResponseId`) and uncompressed. */
  readonly body: Uint8Array;
  /** Only the headers needed to replay the body (Content-Type, Inference-Header-Content-Length). */
  readonly headers: Readonly<Record<string, string>>;
  /** Node compute time of this response in µs (0 when unknown); a later HIT reports it as saved. */
  readonly computeUs: number;
  /**
   * False for anything that must be served but never stored, e.g. a partial result. Default true.
   * (Failed calls are never stored anyway: `produce` throws for them.)
   */
  readonly cacheable?: boolean;
}

/**
 * `produce` receives the signal of the shared work, NOT of the request that happened to start it: it
 * aborts only when every request waiting for the result has gone. Pass it (not the leader's own request
 * signal) to the upstream call, so that one cancelled client cannot fail the others.
 */
export type Produce = (signal: CancelSignal) => Promise<ProducedResponse>;

export interface CacheRunOptions {
  /** The request's own cancellation: aborting it makes this request's `run` reject with CANCELLED. */
  readonly signal?: AbortSignal;
  /**
   * The same as a Cancellation (core/http/cancellation.ts), used instead of `signal` when set: its
   * signal is read only on the paths that hand it on, never for a hit on the in-process copy.
   */
  readonly cancel?: Cancellation;
}

export interface CacheRunResult {
  /** Shared between coalesced requests and with the in-process store: treat it as read-only. */
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly status: CacheStatus;
  /** Node compute time of the original response, in µs. */
  readonly computeUs: number;
  /** On a HIT read from the store: how long ago the entry was stored, in ms (for an `Age` header). */
  readonly ageMs?: number;
}

/**
 * Where a HIT came from: the in-process copy (`local`, no store call), the shared store (`store`), or
 * another request's lookup or upstream call that this one waited for (`coalesced`).
 */
export type CacheHitSource = 'local' | 'store' | 'coalesced';

/** Why a request did not use the cache. */
export type CacheBypassReason = 'no-store' | 'ttl-zero' | 'store-unavailable';

/** Why a produced response was served but not stored. */
export type CacheNotStoredReason = 'too-large' | 'uncacheable';

/**
 * Metrics hooks (the app registers the Prometheus series and implements this). Every request that
 * completes through `run` triggers exactly one of `hit`, `miss`, `bypass`; `notStored` comes in
 * addition, once per produced response that was not stored.
 */
export interface CacheObserver {
  /** Served without an upstream call of its own: `bytes` served from cache, `computeUs` of node time saved. */
  hit(labels: CacheLabels, served: { readonly bytes: number; readonly computeUs: number; readonly source: CacheHitSource }): void;
  miss(labels: CacheLabels): void;
  bypass(labels: CacheLabels, reason: CacheBypassReason): void;
  notStored(labels: CacheLabels, reason: CacheNotStoredReason, bytes: number): void;
}

export const noopCacheObserver: CacheObserver = {
  hit: () => {},
  miss: () => {},
  bypass: () => {},
  notStored: () => {},
};
