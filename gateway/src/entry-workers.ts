/**
 * The gateway on Cloudflare Workers: the same runtime-agnostic core (`createGatewayApp`) over the
 * Workers adapters (adapters/workers):
 *
 * | port / concern     | on Workers                                                                 |
 * |--------------------|----------------------------------------------------------------------------|
 * | TenantStore        | KV `TENANTS` (the config's tenants are seeded once per config version)     |
 * | ResponseCache      | KV `CACHE` (absent → BYPASS), through the core cache layer                  |
 * | RateLimiter        | RateLimiterDO, one per tenant: global, not per location                    |
 * | admission + routing| AdmissionDO, one per model: the core dispatcher, global priority queue     |
 * | NodeDirectory      | FleetDO (nodes push load reports to POST /admin/fleet/report), snapshots   |
 * | NodeTransport      | KServe v2 HTTP with binary tensors over fetch                              |
 * | metrics            | per-isolate counters (no prom-client on Workers)                           |
 *
 * Two-tier mode (UPSTREAM_GATEWAYS set): inference and metadata go to Node gateways instead of the
 * AdmissionDO and the nodes; auth, cache and the per-tenant quota stay here (docs/edge.md).
 *
 * Everything is built once per isolate on its first request. Before a /v2 request the isolate's
 * fleet view is re-read when older than FLEET_REFRESH_MS (it serves metadata, readiness and the
 * cache's version resolution; inference itself is routed by the AdmissionDO). Design and the
 * two-tier option: docs/edge.md. Run locally: `npm run dev:edge`.
 */
import { computeCacheKey } from '../../shared/src/cache-key/index.js';
import type { Logger } from '../../shared/src/logging/logger-interface.js';
import { sha256Hex } from './core/auth/index.js';
import { createGatewayApp, createInferCache, type GatewayApp } from './core/app/index.js';
import { seedTenants } from './core/auth/index.js';
import { createCacheLayer } from './core/cache/index.js';
import { LlmRouter, type LlmDeps } from './core/llm/index.js';
import { loadCl100kCounter } from '../../shared/src/llm/cl100k-counter.js';
import { errorResponse } from './core/http/index.js';
import {
  createConsoleLogger,
  createDurableRateLimiter,
  createEdgeDispatcher,
  createFetchLlmUpstream,
  createFleetClient,
  createHttpTransport,
  createIsolateMetrics,
  createKvResponseCache,
  createKvTenantStore,
  createSnapshotDirectory,
  createTwoTierDispatcher,
  edgeSettings,
  handleFleetRoutes,
  type EdgeEnv,
  type EdgeSettings,
  type ExecutionContextLike,
  type FleetClient,
  type SnapshotDirectory,
} from './adapters/workers/index.js';
import { createVersionChooser } from './core/routing/index.js';

export { AdmissionDO, FleetDO, RateLimiterDO } from './adapters/workers/index.js';

interface Isolate {
  readonly settings: EdgeSettings;
  readonly app: GatewayApp;
  readonly directory: SnapshotDirectory;
  readonly fleet: FleetClient;
}

const logger: Logger = createConsoleLogger({ fields: { component: 'edge-gateway' } });
/** Built on the first request; an isolate's env never changes, so one build serves its whole life. */
let isolate: Promise<Isolate> | undefined;

async function build(env: EdgeEnv): Promise<Isolate> {
  const settings = await edgeSettings(env);
  const { config } = settings;
  const tenants = createKvTenantStore(env.TENANTS);
  await seedOnce(env, settings);
  const fleet = createFleetClient(env.FLEET);
  const directory = createSnapshotDirectory({
    load: () => fleet.snapshot(),
    onError: (error) => logger.warn('cannot read the fleet', { error: (error as Error).message }),
  });
  const transport = createHttpTransport({ scheme: settings.nodeScheme });
  const twoTier = settings.upstreams.length > 0;
  const dispatcher = twoTier
    ? createTwoTierDispatcher({ upstreams: settings.upstreams, ...(settings.upstreamApiKey === undefined ? {} : { apiKey: settings.upstreamApiKey }) })
    : createEdgeDispatcher({ admission: env.ADMISSION, directory, transport, routing: config.routing });
  const cache =
    env.CACHE === undefined || !config.cache.enabled
      ? undefined
      : createInferCache({
          layer: createCacheLayer({ store: createKvResponseCache(env.CACHE), maxEntryBytes: config.cache.maxEntryBytes, logger }),
          settings: config.cache,
          // The Worker's dispatch chooses in the AdmissionDO; it gets the request pinned to this choice.
          versions: createVersionChooser({ directory, routing: config.routing }),
          computeKey: computeCacheKey,
          keyPrefix: config.keyPrefix,
        });
  // LLM routes (core/llm) in direct mode: streams relayed over fetch; admission per isolate (see docs/edge.md).
  const llm: LlmDeps | undefined = twoTier
    ? undefined
    : {
        router: new LlmRouter({ directory, maxStreamsPerNode: config.llm.maxStreamsPerNode }),
        upstream: createFetchLlmUpstream({ scheme: settings.nodeScheme }),
        tokenCounter: loadCl100kCounter,
        ...(env.CACHE === undefined ? {} : { cache: { store: createKvResponseCache(env.CACHE), prefix: config.keyPrefix } }),
        settings: { maxPromptChars: config.llm.maxPromptChars, chargeEveryTokens: config.llm.chargeEveryTokens },
      };
  const app = createGatewayApp({
    config,
    tenants,
    ...(llm === undefined ? {} : { llm }),
    rateLimiter: createDurableRateLimiter({ namespace: env.RATE_LIMITER, logger }),
    dispatcher,
    ...(cache === undefined ? {} : { cache }),
    metrics: createIsolateMetrics(),
    logger,
    isReady: () => twoTier || directory.all().length > 0,
    version: '0.1.0-edge',
  });
  logger.info('edge gateway ready', { mode: twoTier ? 'two-tier' : 'direct', upstreams: settings.upstreams.length });
  if (config.adminKeyHash === null) logger.warn('no admin key (TESSERA_ADMIN_KEY secret or adminKeyHash): the admin API is disabled');
  return { settings, app, directory, fleet };
}

/**
 * Seeds the config's tenants into KV once per distinct tenant list (a marker key holds its hash), so
 * a fresh isolate costs no KV writes; seedTenants itself never undoes admin changes.
 */
async function seedOnce(env: EdgeEnv, settings: EdgeSettings): Promise<void> {
  const tenants = settings.config.tenants;
  if (tenants.length === 0) return;
  const marker = `seeded:${await sha256Hex(JSON.stringify(tenants))}`;
  if ((await env.TENANTS.get(marker, 'text')) !== null) return;
  await seedTenants(createKvTenantStore(env.TENANTS), tenants, Date.now());
  await env.TENANTS.put(marker, String(Date.now()));
}

function isolateFor(env: EdgeEnv): Promise<Isolate> {
  if (isolate === undefined) {
    const built = build(env);
    isolate = built;
    // A failed start is retried by the next request instead of being remembered for the isolate's life.
    built.catch(() => {
      if (isolate === built) isolate = undefined;
    });
  }
  return isolate;
}

export default {
  async fetch(request: Request, env: EdgeEnv, _ctx: ExecutionContextLike): Promise<Response> {
    try {
      const { settings, app, directory, fleet } = await isolateFor(env);
      const own = await handleFleetRoutes(request, {
        fleet,
        admission: env.ADMISSION,
        fleetTokenHash: settings.fleetTokenHash,
        adminKeyHash: settings.config.adminKeyHash,
      });
      if (own !== undefined) return own;
      // Two-tier mode routes nothing itself: its fleet view is unused.
      if (settings.upstreams.length === 0 && new URL(request.url).pathname.startsWith('/v2')) {
        await directory.refreshIfOlder(settings.fleetRefreshMs);
      }
      return await app.fetch(request);
    } catch (error) {
      return errorResponse(error, logger);
    }
  },
};
