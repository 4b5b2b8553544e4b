/**
 * The gateway's Prometheus metrics (prom-client), in one private registry. It implements the core's
 * `GatewayMetrics` port and the observers of the cache layer and the dispatcher, so every series of
 * the gateway is declared here, once.
 *
 * Label sets are bounded: tenant ids (never keys), tier names, model names, versions, status codes,
 * node ids. Tenants and models can still grow without bound in principle (admin API, URLs), so each
 * label keeps at most `maxLabelValues` distinct values (default 1000); later ones are written "_other".
 * Model names come from request URLs, which any tenant writes: with `setModelFilter` (the gateway sets
 * it to "a node of the fleet serves it"), a model nobody serves is written "unknown", so made-up
 * names cannot use up the model label's budget and push real models into "_other".
 *
 * The counters every request touches (requests, cache outcomes, bytes and compute saved, hit
 * sources) are fed through counter cells (counter-cells.ts): the cells of a request's label values
 * are found with one map lookup, remembered per raw label combination (at most `MAX_REMEMBERED`,
 * then forgotten all at once), instead of prom-client hashing and validating labels on each increment.
 * The histograms of every request and every upstream call go the same way (histogram-cells.ts).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { AdmissionRejectReason, AuthRejection, DispatchObserver, GatewayMetrics, RequestObservation, UpstreamEvent } from '../../core/ports/index.js';
import type { CacheBypassReason, CacheHitSource, CacheLabels, CacheNotStoredReason, CacheObserver } from '../../core/cache/index.js';
import { CounterCells, type CounterCell } from './counter-cells.js';
import { HistogramCells, type HistogramCell } from './histogram-cells.js';

export interface PromMetricsOptions {
  /** Most distinct values one label keeps; default 1000. */
  readonly maxLabelValues?: number;
  /** Also export Node's process metrics (CPU, heap, event loop); default true. */
  readonly processMetrics?: boolean;
  /** Metric name prefix; default "tessera_gateway_". */
  readonly prefix?: string;
}

export type BreakerState = 'closed' | 'half_open' | 'open';

export interface PromMetrics extends GatewayMetrics, CacheObserver, DispatchObserver {
  readonly registry: Registry;
  /** A request allowed because the rate-limit store failed (fail-open policy). */
  rateLimitStoreError(): void;
  breakerState(nodeId: string, state: BreakerState): void;
  /** Read at each scrape: nodes in the fleet view. */
  setFleetSize(read: () => number): void;
  /** Read at each scrape: requests waiting in the admission queues, per model. */
  setQueueDepth(read: () => ReadonlyMap<string, number>): void;
  /** Which model names may be label values (the fleet serves them); others are written "unknown". Default: all. */
  setModelFilter(isServed: (model: string) => boolean): void;
  /** Read at each scrape: the cache's in-process copies (L1), undefined when it has none. */
  setLocalCache(read: () => { readonly entries: number; readonly bytes: number } | undefined): void;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };
/** Raw label combinations whose cells are remembered at most; past it the memory starts over. */
const MAX_REMEMBERED = 4096;
/**
 * How often the event-loop lag metric samples the loop, ms. prom-client's default (10 ms) is a timer that
 * wakes the process 100 times a second whatever the traffic: the most frequent wake-up of an idle
 * gateway, and at 150 misses/s one more for every two misses (docs/benchmarks.md, issue 17,
 * 2026-11-26f). Ten samples a second still give the lag percentiles a few hundred samples per scrape.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;
/** The model label of a model no node serves. */
export const UNKNOWN_MODEL = 'unknown';

/** A map that forgets everything when full: bounded memory whatever label values requests bring. */
function rememberer<T>(): (key: string, make: () => T) => T {
  const known = new Map<string, T>();
  return (key, make) => {
    let value = known.get(key);
    if (value === undefined) {
      if (known.size >= MAX_REMEMBERED) known.clear();
      value = make();
      known.set(key, value);
    }
    return value;
  };
}

/** The cache series of one tenant, model and version; each cell made on first use, as inc() would. */
interface CacheSeries {
  readonly labels: { readonly tenant: string; readonly model: string; readonly version: string };
  hit?: CounterCell;
  miss?: CounterCell;
  bypass?: CounterCell;
  bytes?: CounterCell;
  saved?: CounterCell;
  sources: Partial<Record<CacheHitSource, CounterCell>>;
  bypassReasons: Partial<Record<CacheBypassReason, CounterCell>>;
}

export function createPromMetrics(options: PromMetricsOptions = {}): PromMetrics {
  const p = options.prefix ?? 'tessera_gateway_';
  const maxValues = options.maxLabelValues ?? 1000;
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: p, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

  const seen = new Map<string, Set<string>>();
  /** The value itself while the label has room, else "_other". */
  const bound = (label: string, value: string): string => {
    let values = seen.get(label);
    if (values === undefined) seen.set(label, (values = new Set()));
    if (values.has(value)) return value;
    if (values.size >= maxValues) return '_other';
    values.add(value);
    return value;
  };
  const tenantOf = (t: string): string => (t === '' ? '_anonymous' : bound('tenant', t));
  let isServed: (model: string) => boolean = () => true;
  const modelOf = (m: string): string => (m === '' ? '' : isServed(m) ? bound('model', m) : UNKNOWN_MODEL);

  const requests = new CounterCells({ name: `${p}requests_total`, help: 'Requests by route, tenant, tier, model and HTTP status', labelNames: ['route', 'tenant', 'tier', 'model', 'status'], registry });
  const latency = new HistogramCells({ name: `${p}request_duration_seconds`, help: 'Total time in the gateway per request', labelNames: ['route', 'tier', 'model'], buckets: LATENCY_BUCKETS, registry });
  const queueWait = new HistogramCells({ name: `${p}queue_wait_seconds`, help: 'Time in the admission queue before dispatch', labelNames: ['tier', 'model'], buckets: LATENCY_BUCKETS, registry });
  const upstream = new HistogramCells({ name: `${p}upstream_duration_seconds`, help: 'Upstream infer calls to nodes', labelNames: ['model', 'node', 'outcome'], buckets: LATENCY_BUCKETS, registry });
  const admissionRejections = new Counter({ name: `${p}admission_rejections_total`, help: 'Requests refused or dropped by admission', labelNames: ['tier', 'model', 'reason'], registers: [registry] });
  const rateLimited = new Counter({ name: `${p}rate_limited_total`, help: 'Requests refused by rate limits (429)', labelNames: ['tenant', 'tier'], registers: [registry] });
  const rateLimitStoreErrors = new Counter({ name: `${p}rate_limit_store_errors_total`, help: 'Requests allowed because the rate-limit store failed (fail open)', registers: [registry] });
  const authRejections = new Counter({ name: `${p}auth_rejections_total`, help: 'Requests refused by authentication or authorization', labelNames: ['reason'], registers: [registry] });
  const cacheRequests = new CounterCells({ name: `${p}cache_requests_total`, help: 'Cache outcomes: hit, miss, bypass', labelNames: ['tenant', 'model', 'version', 'result'], registry });
  const cacheBypass = new CounterCells({ name: `${p}cache_bypass_total`, help: 'Cache bypasses by reason', labelNames: ['model', 'reason'], registry });
  const cacheBytes = new CounterCells({ name: `${p}cache_served_bytes_total`, help: 'Response bytes served from the cache', labelNames: ['tenant', 'model', 'version'], registry });
  const computeSaved = new CounterCells({ name: `${p}cache_compute_saved_seconds_total`, help: 'Node compute time saved by cache hits', labelNames: ['tenant', 'model', 'version'], registry });
  const hitSources = new CounterCells({ name: `${p}cache_hits_by_source_total`, help: 'Cache hits by where the answer came from: local (in-process copy), store (Redis), coalesced (waited for another request)', labelNames: ['model', 'source'], registry });
  const notStored = new Counter({ name: `${p}cache_not_stored_total`, help: 'Responses served but not stored', labelNames: ['model', 'reason'], registers: [registry] });
  const llmTokens = new CounterCells({ name: `${p}llm_tokens_total`, help: 'LLM tokens metered per tenant and model: direction "in" = prompt (charged on admission), "out" = completion (as streamed)', labelNames: ['tenant', 'model', 'direction'], registry });
  const rememberTokenSeries = rememberer<CounterCell>();
  const breaker = new Gauge({ name: `${p}breaker_state`, help: 'Circuit breaker per node: 0 closed, 1 half-open, 2 open', labelNames: ['node'], registers: [registry] });
  let fleet: () => number = () => 0;
  new Gauge({ name: `${p}fleet_nodes`, help: 'Nodes in the fleet view', registers: [registry], collect() { this.set(fleet()); } });
  let depth: () => ReadonlyMap<string, number> = () => new Map();
  new Gauge({
    name: `${p}queue_depth`,
    help: 'Requests waiting in the admission queue per model',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [model, n] of depth()) this.set({ model: modelOf(model) }, n);
    },
  });

  let localCache: () => { readonly entries: number; readonly bytes: number } | undefined = () => undefined;
  new Gauge({ name: `${p}cache_local_bytes`, help: 'Bytes held by the in-process cache copies (L1)', registers: [registry], collect() { this.set(localCache()?.bytes ?? 0); } });
  new Gauge({ name: `${p}cache_local_entries`, help: 'Entries held by the in-process cache copies (L1)', registers: [registry], collect() { this.set(localCache()?.entries ?? 0); } });

  const cacheLabels = (l: CacheLabels) => ({ tenant: tenantOf(l.tenant), model: modelOf(l.model), version: bound('version', l.version) });
  const rememberCacheSeries = rememberer<CacheSeries>();
  // The series of the previous call, compared field by field before building a key: a steady stream
  // of one tenant's requests then never concatenates and hashes a key string per request.
  let lastCache: { served: boolean; tenant: string; model: string; version: string; series: CacheSeries } | undefined;
  const cacheSeries = (l: CacheLabels): CacheSeries => {
    const served = isServed(l.model);
    const last = lastCache;
    if (last !== undefined && last.served === served && last.tenant === l.tenant && last.model === l.model && last.version === l.version) return last.series;
    const series = rememberCacheSeries(`${served ? 1 : 0}\u0000${l.tenant}\u0000${l.model}\u0000${l.version}`, () => ({ labels: cacheLabels(l), sources: {}, bypassReasons: {} }));
    lastCache = { served, tenant: l.tenant, model: l.model, version: l.version, series };
    return series;
  };
  type RequestSeries = { readonly count: CounterCell; readonly latency: HistogramCell };
  const rememberRequestSeries = rememberer<RequestSeries>();
  // As lastCache: the previous request's series, matched on the fields of its key.
  let lastRequest: { route: string; tenant: string; tier: string; model: string; status: number; series: RequestSeries } | undefined;
  const rememberQueueWait = rememberer<HistogramCell>();
  const rememberUpstream = rememberer<HistogramCell>();

  return {
    registry,
    request(o: RequestObservation) {
      // Made-up model names share one remembered series ("unknown") instead of one each. A successful
      // answer proves the model served (made-up names never succeed), even before the fleet view lists it.
      const known = o.model === '' || (o.status >= 200 && o.status < 300) || isServed(o.model);
      const raw = known ? o.model : UNKNOWN_MODEL;
      const last = lastRequest;
      let series: RequestSeries;
      if (last !== undefined && last.route === o.route && last.tenant === o.tenant && last.tier === o.tier && last.model === raw && last.status === o.status) {
        series = last.series;
      } else {
        series = rememberRequestSeries(`${o.route}\u0000${o.tenant}\u0000${o.tier}\u0000${raw}\u0000${o.status}`, () => {
          const model = raw === UNKNOWN_MODEL || raw === '' ? raw : bound('model', raw);
          return {
            count: requests.cell({ route: o.route, tenant: tenantOf(o.tenant), tier: o.tier, model, status: String(o.status) }),
            latency: latency.cell({ route: o.route, tier: o.tier, model }),
          };
        });
        lastRequest = { route: o.route, tenant: o.tenant, tier: o.tier, model: raw, status: o.status, series };
      }
      series.count.value += 1;
      series.latency.observe(o.seconds);
    },
    rateLimited(tenant, tier) {
      rateLimited.inc({ tenant: tenantOf(tenant), tier });
    },
    authRejected(reason: AuthRejection) {
      authRejections.inc({ reason });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    llmTokens(tenant, model, direction, tokens) {
      const cell = rememberTokenSeries(`${isServed(model) ? 1 : 0}\u0000${tenant}\u0000${model}\u0000${direction}`, () =>
        llmTokens.cell({ tenant: tenantOf(tenant), model: modelOf(model), direction }),
      );
      cell.value += tokens;
    },
    rateLimitStoreError() {
      rateLimitStoreErrors.inc();
    },
    breakerState(nodeId, state) {
      breaker.set({ node: bound('node', nodeId) }, BREAKER_VALUE[state]);
    },
    setFleetSize(read) {
      fleet = read;
    },
    setQueueDepth(read) {
      depth = read;
    },
    setLocalCache(read) {
      localCache = read;
    },
    setModelFilter(filter) {
      isServed = filter;
    },
    // CacheObserver
    hit(labels, served) {
      const s = cacheSeries(labels);
      (s.hit ??= cacheRequests.cell({ ...s.labels, result: 'hit' })).value += 1;
      (s.bytes ??= cacheBytes.cell(s.labels)).value += served.bytes;
      (s.saved ??= computeSaved.cell(s.labels)).value += served.computeUs / 1e6;
      (s.sources[served.source] ??= hitSources.cell({ model: s.labels.model, source: served.source })).value += 1;
    },
    miss(labels) {
      const s = cacheSeries(labels);
      (s.miss ??= cacheRequests.cell({ ...s.labels, result: 'miss' })).value += 1;
    },
    bypass(labels, reason: CacheBypassReason) {
      const s = cacheSeries(labels);
      (s.bypass ??= cacheRequests.cell({ ...s.labels, result: 'bypass' })).value += 1;
      (s.bypassReasons[reason] ??= cacheBypass.cell({ model: s.labels.model, reason })).value += 1;
    },
    notStored(labels, reason: CacheNotStoredReason) {
      notStored.inc({ model: modelOf(labels.model), reason });
    },
    // DispatchObserver
    dispatched(model, tier, waitMs) {
      rememberQueueWait(`${isServed(model) ? 1 : 0}\u0000${tier}\u0000${model}`, () => queueWait.cell({ tier, model: modelOf(model) })).observe(waitMs / 1000);
    },
    rejected(model, tier, reason: AdmissionRejectReason) {
      admissionRejections.inc({ tier, model: modelOf(model), reason });
    },
    upstream(event: UpstreamEvent) {
      const cell = rememberUpstream(`${isServed(event.model) ? 1 : 0}\u0000${event.model}\u0000${event.nodeId}\u0000${event.outcome}`, () =>
        upstream.cell({ model: modelOf(event.model), node: bound('node', event.nodeId), outcome: event.outcome }),
      );
      cell.observe(event.durationMs / 1000);
    },
  };
}
