/**
 * The response cache in the request path: look up, coalesce identical misses, produce, store.
 *
 * `run(key, policy, labels, produce)`:
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
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { CachedResponse, ResponseCache } from '../ports/index.js';
import type {
  CacheBypassReason,
  CacheLabels,
  CacheObserver,
  CachePolicy,
  CacheRunOptions,
  CacheRunResult,
  CacheStatus,
  Produce,
  ProducedResponse,
} from './cache-types.js';
import { noopCacheObserver } from './cache-types.js';
import { SingleFlight } from './single-flight.js';
import { StoreHealth, systemClock, type Clock } from './store-health.js';

/** The default largest body stored: 1 MiB. */
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
/** The default time between store probes during an outage: 1000 ms. */
export const DEFAULT_OUTAGE_PROBE_INTERVAL_MS = 1000;

export interface CacheLayerOptions {
  readonly store: ResponseCache;
  /** Largest body stored, in bytes; larger responses are served but not stored. Default 1 MiB. */
  readonly maxEntryBytes?: number;
  /** Metrics hooks; default none. */
  readonly observer?: CacheObserver;
  readonly logger: Logger;
  /** Time source for entry ages and outage probing; default `Date.now`. */
  readonly clock?: Clock;
  /** While the store is failing, at most one request per this many ms tries it; default 1000 ms. */
  readonly outageProbeIntervalMs?: number;
}

export interface CacheLayer {
  run(key: string, policy: CachePolicy, labels: CacheLabels, produce: Produce, options?: CacheRunOptions): Promise<CacheRunResult>;
  /** True while the store is considered down (requests bypass). */
  readonly storeInOutage: boolean;
}

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
let neverAborted: AbortSignal | undefined;
const NEVER_ABORTED = (): AbortSignal => (neverAborted ??= new AbortController().signal);

/** Throws INVALID_ARG for a non-positive or non-integer `maxEntryBytes` or a negative probe interval. */
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
    try {
      await store.set(key, entry, ttlSeconds);
    } catch (error) {
      health.failed('set', error);
      return 'unavailable';
    }
    health.succeeded();
    return 'stored';
  }

  function fromProduced(produced: ProducedResponse, stored: StoreResult): Outcome {
    const base = { body: produced.body, headers: produced.headers, computeUs: computeUsOf(produced) };
    return stored === 'unavailable' ? { ...base, status: 'BYPASS', bypassReason: 'store-unavailable' } : { ...base, status: 'MISS' };
  }

  /** The work of one flight: GET, else produce and SET. */
  async function lookupOrProduce(key: string, ttlSeconds: number, labels: CacheLabels, produce: Produce, signal: AbortSignal): Promise<Outcome> {
    let storeUsable = health.mayUse();
    if (storeUsable) {
      try {
        const cached = await store.get(key);
        health.succeeded();
        if (cached !== undefined) {
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

  function finish(outcome: Outcome, labels: CacheLabels, status: CacheStatus, coalesced: boolean): CacheRunResult {
    if (status === 'HIT') observer.hit(labels, { bytes: outcome.body.byteLength, computeUs: outcome.computeUs, coalesced });
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

  async function bypass(reason: CacheBypassReason, labels: CacheLabels, produce: Produce, signal: AbortSignal | undefined): Promise<CacheRunResult> {
    const produced = await produce(signal ?? NEVER_ABORTED());
    return finish({ ...fromProduced(produced, 'unavailable'), bypassReason: reason }, labels, 'BYPASS', false);
  }

  async function coalesced(
    key: string,
    ttlSeconds: number,
    labels: CacheLabels,
    produce: Produce,
    signal: AbortSignal | undefined,
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
    if (ticket.leader) return finish(outcome, labels, outcome.status, false);
    return finish(outcome, labels, outcome.status === 'MISS' ? 'HIT' : outcome.status, true);
  }

  return {
    get storeInOutage() {
      return health.inOutage;
    },
    async run(key, policy, labels, produce, runOptions) {
      const signal = runOptions?.signal;
      if (policy.directive === 'no-store') return bypass('no-store', labels, produce, signal);
      if (!(policy.ttlSeconds > 0) || !Number.isFinite(policy.ttlSeconds)) return bypass('ttl-zero', labels, produce, signal);
      if (policy.directive === 'no-cache') {
        const produced = await produce(signal ?? NEVER_ABORTED());
        const stored = await tryStore(key, policy.ttlSeconds, labels, produced);
        const outcome = fromProduced(produced, stored);
        return finish(outcome, labels, outcome.status, false);
      }
      return coalesced(key, policy.ttlSeconds, labels, produce, signal, true);
    },
  };
}

function computeUsOf(produced: ProducedResponse): number {
  return Number.isFinite(produced.computeUs) && produced.computeUs > 0 ? produced.computeUs : 0;
}
