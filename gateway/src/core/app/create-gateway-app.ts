/**
 * `createGatewayApp(deps)`: the gateway as one Hono app that speaks Web-standard Request/Response
 * and knows only ports, so the same app runs on Node (entry-node.ts) and on Workers.
 *
 * Order of work for a tenant request: metrics timer → auth (API key → tenant, tier; 401/403) →
 * model permission (403) → body decode → rate limit (429) → cache → dispatcher (admission, routing,
 * upstream). Errors of every layer become Triton-style `{"error": "..."}` JSON with the one status
 * mapping (shared/src/errors); RateLimit-* headers ride on errors too. The infer route runs these steps
 * in DirectInfer (direct-infer.ts), shared with the other front doors; the other routes in the
 * middlewares below, built from the same functions (request-cycle.ts).
 */
import { Hono } from 'hono';
import { noopTracer } from '../../../../shared/src/tracing/index.js';
import { authenticateAdmin } from '../auth/index.js';
import { answerToResponse, jsonResponse } from '../http/index.js';
import { registerJobRoutes, webhookGuardFor } from '../jobs/index.js';
import { registerAdminRoutes } from './admin-routes.js';
import type { AppEnv } from './app-env.js';
import { createDirectInfer, type DirectInfer } from './direct-infer.js';
import { registerInferRoute } from './hono-infer-route.js';
import { createDecoupledCheck, type DecoupledCheck } from './decoupled-models.js';
import type { GatewayAppDeps } from './gateway-deps.js';
import { registerKserveRoutes } from './kserve-routes.js';
import { registerLlmRoutes } from '../llm/llm-routes.js';
import { TenantStats } from './tenant-stats.js';
import { authenticateRequest, failureAnswer, finishRequest } from './request-cycle.js';
import { beginRequest, factsOf, pathOf, REQUEST_ID_HEADER } from './request-telemetry.js';

export interface GatewayApp {
  readonly app: Hono<AppEnv>;
  /** `app.fetch`, bound. */
  readonly fetch: (request: Request) => Promise<Response>;
  /**
   * The infer route's pipeline (direct-infer.ts), which `fetch` serves it by too, for servers that can
   * skip Web Request/Response; paths come from `matchInferPath`.
   */
  readonly serveInfer: DirectInfer;
  /** Whether a model is decoupled (decoupled-models.ts), for the gRPC front door's streams. */
  readonly isDecoupled: DecoupledCheck;
  /** From now on health answers 503, so load balancers stop sending; in-flight requests finish. */
  startDraining(): void;
}

export function createGatewayApp(given: GatewayAppDeps): GatewayApp {
  const deps: GatewayAppDeps = given.stats === undefined ? { ...given, stats: new TenantStats() } : given;
  const now = deps.now ?? Date.now;
  const { config, metrics, logger } = deps;
  const tracer = deps.tracer ?? noopTracer;
  let draining = false;
  const app = new Hono<AppEnv>();
  const serveInfer = createDirectInfer({ ...deps, now });
  // First, so the middlewares below never run for it: DirectInfer runs their steps (hono-infer-route.ts).
  registerInferRoute(app, serveInfer);

  app.use('*', async (c, next) => {
    const started = now();
    const target = { method: c.req.method, path: pathOf(c.req.url) };
    const telemetry = beginRequest(tracer, target.method, target.path, c.req.raw.headers);
    c.set('telemetry', telemetry);
    c.set('route', 'other');
    c.set('model', '');
    c.set('extraHeaders', { [REQUEST_ID_HEADER]: telemetry.requestId });
    c.set('auth', undefined);
    await next();
    const extra = c.get('extraHeaders');
    if (Object.keys(extra).length > 0) {
      const headers = new Headers(c.res.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    }
    finishRequest(metrics, logger, telemetry, target, factsOf(c), c.res.status, now() - started);
  });

  // Every /v2 route but health needs a tenant key (Hono's '/v2/*' also matches '/v2' itself).
  app.use('/v2/*', async (c, next) => {
    if (!c.req.path.startsWith('/v2/health/')) {
      const parent = c.get('telemetry').span.context();
      c.set('auth', await authenticateRequest(deps.tenants, config.tiers, tracer, parent, c.req.raw.headers));
    }
    await next();
  });
  app.use('/admin/*', async (c, next) => {
    c.set('route', 'admin');
    await authenticateAdmin(config.adminKeyHash, c.req.raw.headers);
    await next();
  });

  registerKserveRoutes(app, { ...deps, now, draining: () => draining });
  if (deps.llm !== undefined) registerLlmRoutes(app, { ...deps, now, llm: deps.llm });
  registerAdminRoutes(app, { tenants: deps.tenants, tiers: config.tiers, logger, now });
  registerJobRoutes(app, {
    jobs: deps.jobs,
    tenants: deps.tenants,
    tiers: config.tiers,
    rateLimiter: deps.rateLimiter,
    metrics,
    ...(deps.jobObserver === undefined ? {} : { observer: deps.jobObserver }),
    maxBodyBytes: config.maxBodyBytes,
    logger,
    now,
    webhooks: { guard: webhookGuardFor(config.webhooks), ...(deps.resolveHost === undefined ? {} : { resolve: deps.resolveHost }) },
  });

  app.get('/metrics', async (c) => {
    c.set('route', 'metrics');
    if (config.metrics.requireAdminKey) await authenticateAdmin(config.adminKeyHash, c.req.raw.headers);
    const { contentType, body } = await metrics.render();
    return new Response(body, { status: 200, headers: { 'Content-Type': contentType } });
  });

  app.notFound(() => jsonResponse({ error: 'Not Found' }, 404));
  app.onError((error, c) => {
    const telemetry = c.get('telemetry') as AppEnv['Variables']['telemetry'] | undefined;
    return answerToResponse(failureAnswer(error, metrics, logger, telemetry, factsOf(c), c.req.raw.signal.aborted));
  });

  return {
    app,
    fetch: async (request) => app.fetch(request),
    serveInfer,
    isDecoupled: createDecoupledCheck(deps.dispatcher, now),
    startDraining: () => {
      draining = true;
    },
  };
}
