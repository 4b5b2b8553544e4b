/**
 * The response cache in the request path: look up, coalesce identical misses, produce, store.
 *
 * `run(key, policy, labels, produce)` (`key` may be a function: it is called only when the store is
 * consulted, so a `no-store` or TTL-0 request never pays for hashing its tensors into a key):
 * - `no-store` → produce; the cache is neither read nor written: BYPASS.
 * - TTL ≤ 0 (the tier disables caching) → produce: BYPASS.
 * - `no-cache` → produce (never read), then store the fresh response, replacing any old entry: MISS.
 *   Not coalesced: a client asking for a fresh answer must not be handed a concurrent cached one.
 * - default → join the single flight for `key` (see single-flight.ts): the leader GETs, on a hit
 *   everyone gets the entry (HIT); on a miss the leader produces once, stores, and everyone gets that
 *   response: MISS for the leader, HIT for the followers (served without an upstream call of their own,
 *   like requests that waited on nginx's proxy_cache_lock).
 *
 * Outcomes shared by coalesced requests:
 * - If the leader's produce FAILS, every follower gets the same error: they asked the same question
 *   at the same moment of the same model; retrying N times would multiply load exactly when the node
 *   is struggling. Errors are never stored, so the next request after the failure tries again.
 * - The one exception is CANCELLED. `produce` gets the flight's signal, which aborts only when every
 *   waiting request has gone, so a cancelled leader does not cancel its followers. Should a produce
 *   still fail with CANCELLED (e.g. it used the leader's own request signal), a follower whose request
 *   is alive runs once more on its own instead of inheriting someone else's cancellation.
 * - Deadlines and admission belong to the request that started the flight. Followers of the same
 *   tenant share its tier; on a model shared across tenants a follower may wait under another tier's
 *   deadline. That is accepted: it only ever shortens the wait, and the follower sees the error.
 *
 * Never cached: errors (produce threw), responses marked `cacheable: false` (partial results), and
 * bodies over `maxEntryBytes` (served, reported as `notStored`, x-cache MISS).
 *
 * Store failures: a get or set that throws makes the request BYPASS; it is still served (a get
 * failure falls through to produce). See store-health.ts for the one-log-per-outage rule and probing.
 *
 * The in-process copy (L1, `local`; off unless configured): a byte-bounded LRU (local-cache.ts) of
 * entries this layer read from or wrote to the store, under the same key, so a repeated request is
 * answered without a store round trip. Why: with Redis as the store, its GET was one of the two
 * round trips of every cache hit. Rules:
 * - It holds only what the store holds: filled from a store hit, or after a successful store write.
 *   Never from a response the store did not take (too large, uncacheable, store down).
 * - A copy is served until the store's own expiry (the store's remaining TTL, counted from before
 *   the read or write) or `maxAgeMs` after it was made, whichever is first. The second bound limits
 *   how long a change made through ANOTHER gateway (a `no-cache` refresh, a flushed store) goes
 *   unseen here. This gateway's own refreshes replace its copy at once; an older response read
 *   from the store never replaces a newer copy (by `storedAt`).
 * - `default` requests look in it first, before coalescing; `no-cache` never reads it and replaces
 *   the copy when the store took the fresh response; `no-store` and TTL 0 ignore it.
 * - While the store is down, copies keep being served until they expire; nothing new is added.
 */
import { cancelSignalOf, type CancelSignal } from '../http/cancellation.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import type { CachedResponse, ResponseCache } from '../ports/index.js';
import type {
  CacheBypassReason,
  CacheHitSource,
  CacheLabels,
  CacheObserver,
  CachePolicy,
  CacheRunOptions,
  CacheRunResult,
  CacheStatus,
  Produce,
  ProducedResponse,
} from './cache-types.js';
import { bypassRunOf } from './bypass-run.js';
import { noopCacheObserver } from './cache-types.js';
import { LocalCache } from './local-cache.js';
import { SingleFlight } from './single-flight.js';
import { systemClock } from '../admission/clock.js';
import { StoreHealth, type WallClock } from './store-health.js';

/** The default largest body stored: 1 MiB. */
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
/** The default time between store probes during an outage: 1000 ms. */
export const DEFAULT_OUTAGE_PROBE_INTERVAL_MS = 1000;
/** The default longest life of an in-process copy: 5000 ms (then the store is asked again). */
export const DEFAULT_LOCAL_MAX_AGE_MS = 5000;

export interface LocalLayerOptions {
  /** Byte budget of the in-process copies (entries are charged body, key and headers); 0 turns them off. */
  readonly maxBytes: number;
  /** Longest time a copy is served without reading the store again, in ms; default 5000. */
  readonly maxAgeMs?: number;
}

export interface CacheLayerOptions {
  readonly store: ResponseCache;
  /** Largest body stored, in bytes; larger responses are served but not stored. Default 1 MiB. */
  readonly maxEntryBytes?: number;
  /** Metrics hooks; default none. */
  readonly observer?: CacheObserver;
  readonly logger: Logger;
  /** Time source for entry ages and outage probing; default `Date.now`. */
  readonly clock?: WallClock;
  /** While the store is failing, at most one request per this many ms tries it; default 1000 ms. */
  readonly outageProbeIntervalMs?: number;
  /** An in-process copy (L1) of store entries in front of the store; default none. */
  readonly local?: LocalLayerOptions;
}

export interface CacheLayer {
  run(key: CacheKeySource, policy: CachePolicy, labels: CacheLabels, produce: Produce, options?: CacheRunOptions): Promise<CacheRunResult>;
  /** True while the store is considered down (requests bypass). */
  readonly storeInOutage: boolean;
  /** The in-process copies now; undefined when they are off. */
  readonly local: { readonly entries: number; readonly bytes: number } | undefined;
}

/** The entry's key, or how to compute it when it is needed (never for a bypass). */
export type CacheKeySource = string | (() => string);

/** What one flight (or one uncoalesced request) ended with, before per-request labelling. */
interface Outcome {
  readonly status: CacheStatus;
  readonly bypassReason?: CacheBypassReason;
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly computeUs: number;
  readonly ageMs?: number;
}

type StoreResult = 'stored' | 'not-stored' | 'unavailable';

// Made on first use, not at import: workerd forbids creating an AbortController in global scope.
let neverAborted: CancelSignal | undefined;
const NEVER_ABORTED = (): CancelSignal => (neverAborted ??= new AbortController().signal);

/**
 * Throws INVALID_ARG for a non-positive or non-integer `maxEntryBytes`, a negative probe interval, a
 * negative or non-integer `local.maxBytes` or a non-positive `local.maxAgeMs`.
 */
export function createCacheLayer(options: CacheLayerOptions): CacheLayer {
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  if (!Number.isSafeInteger(maxEntryBytes) || maxEntryBytes <= 0) {
    throw TesseraError.invalidArg(`cache maxEntryBytes must be a positive integer, got ${maxEntryBytes}`);
  }
  const probeMs = options.outageProbeIntervalMs ?? DEFAULT_OUTAGE_PROBE_INTERVAL_MS;
  if (!Number.isFinite(probeMs) || probeMs < 0) {
    throw TesseraError.invalidArg(`cache outageProbeIntervalMs must be a number >= 0, got ${probeMs}`);
  }
  const { store } = options;
  const observer = options.observer ?? noopCacheObserver;
  const clock = options.clock ?? systemClock;
  const health = new StoreHealth(options.logger, clock, probeMs);
  const flights = new SingleFlight<Outcome>();
  const local = createLocal(options.local);
  const localMaxAgeMs = options.local?.maxAgeMs ?? DEFAULT_LOCAL_MAX_AGE_MS;

  /** Copies what the store holds until `storeExpiresAt` (never longer), unless a newer copy is there. */
  function keepLocal(key: string, value: CachedResponse, storeExpiresAt: number): void {
    if (local === undefined) return;
    const now = clock.now();
    const held = local.peek(key, now);
    // A store read that began before this gateway refreshed the entry must not put the older one back.
    if (held !== undefined && held.storedAt > value.storedAt) return;
    local.set(key, value, Math.min(storeExpiresAt, now + localMaxAgeMs), now);
  }

  async function tryStore(key: string, ttlSeconds: number, labels: CacheLabels, produced: ProducedResponse): Promise<StoreResult> {
    const bytes = produced.body.byteLength;
    if (produced.cacheable === false) {
      observer.notStored(labels, 'uncacheable', bytes);
      return 'not-stored';
    }
    if (bytes > maxEntryBytes) {
      observer.notStored(labels, 'too-large', bytes);
      return 'not-stored';
    }
    if (!health.mayUse()) return 'unavailable';
    const entry: CachedResponse = {
      body: produced.body,
      headers: produced.headers,
      computeUs: computeUsOf(produced),
      storedAt: clock.now(),
    };
    // The store's expiry starts when it runs the write, after this: the copy cannot outlive the entry.
    const setAt = clock.now();
    try {
      await store.set(key, entry, ttlSeconds);
    } catch (error) {
      health.failed('set', error);
      return 'unavailable';
    }
    health.succeeded();
    keepLocal(key, entry, setAt + ttlSeconds * 1000);
    return 'stored';
  }

  function fromProduced(produced: ProducedResponse, stored: StoreResult): Outcome {
    const base = { body: produced.body, headers: produced.headers, computeUs: computeUsOf(produced) };
    return stored === 'unavailable' ? { ...base, status: 'BYPASS', bypassReason: 'store-unavailable' } : { ...base, status: 'MISS' };
  }

  /** The work of one flight: GET, else produce and SET. */
  async function lookupOrProduce(key: string, ttlSeconds: number, labels: CacheLabels, produce: Produce, signal: CancelSignal): Promise<Outcome> {
    let storeUsable = health.mayUse();
    if (storeUsable) {
      try {
        const askedAt = clock.now();
        const cached = await store.get(key);
        health.succeeded();
        if (cached !== undefined) {
          if (cached.remainingMs !== undefined) keepLocal(key, cached, askedAt + cached.remainingMs);
          return {
            status: 'HIT',
            body: cached.body,
            headers: cached.headers,
            computeUs: cached.computeUs,
            ageMs: Math.max(0, clock.now() - cached.storedAt),
          };
        }
      } catch (error) {
        health.failed('get', error);
        storeUsable = false;
      }
    }
    const produced = await produce(signal);
    if (!storeUsable) return fromProduced(produced, 'unavailable');
    return fromProduced(produced, await tryStore(key, ttlSeconds, labels, produced));
  }

  /** `source`: where a HIT came from (ignored for other statuses). */
  function finish(outcome: Outcome, labels: CacheLabels, status: CacheStatus, source: CacheHitSource): CacheRunResult {
    if (status === 'HIT') observer.hit(labels, { bytes: outcome.body.byteLength, computeUs: outcome.computeUs, source });
    else if (status === 'MISS') observer.miss(labels);
    else observer.bypass(labels, outcome.bypassReason ?? 'store-unavailable');
    return {
      body: outcome.body,
      headers: outcome.headers,
      status,
      computeUs: outcome.computeUs,
      ...(status === 'HIT' && outcome.ageMs !== undefined ? { ageMs: outcome.ageMs } : {}),
    };
  }

  async function bypass(reason: CacheBypassReason, labels: CacheLabels, produce: Produce, signal: CancelSignal | undefined): Promise<CacheRunResult> {
    const produced = await produce(signal ?? NEVER_ABORTED());
    observer.bypass(labels, reason);
    // Not finish(): its copy would read the body, which a gRPC answer never reads (bypass-run.ts).
    return bypassRunOf(produced);
  }

  async function coalesced(
    key: string,
    ttlSeconds: number,
    labels: CacheLabels,
    produce: Produce,
    signal: CancelSignal | undefined,
    mayRetry: boolean,
  ): Promise<CacheRunResult> {
    const ticket = flights.join(key, (flightSignal) => lookupOrProduce(key, ttlSeconds, labels, produce, flightSignal), signal);
    let outcome: Outcome;
    try {
      outcome = await ticket.result;
    } catch (error) {
      const inherited = !ticket.leader && error instanceof TesseraError && error.code === 'CANCELLED';
      if (mayRetry && inherited && signal?.aborted !== true) {
        return coalesced(key, ttlSeconds, labels, produce, signal, false);
      }
      throw error;
    }
    if (ticket.leader) return finish(outcome, labels, outcome.status, 'store');
    return finish(outcome, labels, outcome.status === 'MISS' ? 'HIT' : outcome.status, 'coalesced');
  }

  return {
    get storeInOutage() {
      return health.inOutage;
    },
    get local() {
      return local === undefined ? undefined : { entries: local.size, bytes: local.bytes };
    },
    async run(keySource, policy, labels, produce, runOptions) {
      if (policy.directive === 'no-store') return bypass('no-store', labels, produce, signalOf(runOptions));
      if (!(policy.ttlSeconds > 0) || !Number.isFinite(policy.ttlSeconds)) return bypass('ttl-zero', labels, produce, signalOf(runOptions));
      const key = typeof keySource === 'string' ? keySource : keySource();
      if (policy.directive === 'no-cache') {
        const produced = await produce(signalOf(runOptions) ?? NEVER_ABORTED());
        const stored = await tryStore(key, policy.ttlSeconds, labels, produced);
        const outcome = fromProduced(produced, stored);
        return finish(outcome, labels, outcome.status, 'store');
      }
      // A request already cancelled fails as it would in the flight, copy or not.
      if (local !== undefined && !abortedOf(runOptions)) {
        const now = clock.now();
        const copy = local.get(key, now);
        if (copy !== undefined) {
          const outcome: Outcome = { status: 'HIT', body: copy.body, headers: copy.headers, computeUs: copy.computeUs, ageMs: Math.max(0, now - copy.storedAt) };
          return finish(outcome, labels, 'HIT', 'local');
        }
      }
      return coalesced(key, policy.ttlSeconds, labels, produce, signalOf(runOptions), true);
    },
  };
}

/** The request's signal, made now if it is a Cancellation's. */
function signalOf(options: CacheRunOptions | undefined): CancelSignal | undefined {
  if (options === undefined) return undefined;
  return options.cancel !== undefined ? cancelSignalOf(options.cancel) : options.signal;
}

/** Whether the request was cancelled, without making its signal. */
function abortedOf(options: CacheRunOptions | undefined): boolean {
  if (options === undefined) return false;
  return options.cancel !== undefined ? options.cancel.aborted : options.signal?.aborted === true;
}

function createLocal(options: LocalLayerOptions | undefined): LocalCache | undefined {
  if (options === undefined) return undefined;
  const { maxBytes, maxAgeMs } = options;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw TesseraError.invalidArg(`cache local.maxBytes must be an integer >= 0, got ${maxBytes}`);
  }
  if (maxAgeMs !== undefined && !(Number.isFinite(maxAgeMs) && maxAgeMs > 0)) {
    throw TesseraError.invalidArg(`cache local.maxAgeMs must be a number > 0, got ${maxAgeMs}`);
  }
  return maxBytes === 0 ? undefined : new LocalCache(maxBytes);
}

function computeUsOf(produced: ProducedResponse): number {
  return Number.isFinite(produced.computeUs) && produced.computeUs > 0 ? produced.computeUs : 0;
}
