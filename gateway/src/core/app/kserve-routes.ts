/**
 * The KServe v2 routes a tenant sees, with Triton's status codes so Triton's own clients work through
 * the gateway:
 * - GET  /v2/health/live, /v2/health/ready        200 or 400/503, empty body, no key needed (probes)
 * - GET  /v2                                       server metadata
 * - GET  /v2/models/{m}[/versions/{v}]            model metadata (from a node serving it)
 * - GET  /v2/models/{m}[/versions/{v}]/ready      200 or 400, empty body
 * - GET  /v2/models/{m}[/versions/{v}]/config     model config as Triton JSON
 * - POST /v2/models/{m}[/versions/{v}]/infer      JSON or JSON + binary tensors; raw binary bodies
 *        (Inference-Header-Content-Length: 0) are UNSUPPORTED at the gateway (they need the model's config)
 * - GET  /v2/models/stats, /v2/models/{m}[/versions/{v}]/stats   the tenant's own inferences (tenant-stats.ts)
 * - POST /v2/repository/index                      the models the tenant may use that the fleet knows
 *        (read-only: the repository's load/unload routes are not served through the gateway)
 * Every route but health needs an API key; model routes need a key whose tier and tenant allow the model.
 * The infer route's POST is not here: hono-infer-route.ts serves it through DirectInfer, ahead of the
 * app's middlewares; this file answers its other methods (405).
 */
import type { Context, Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { inSpan, noopTracer } from '../../../../shared/src/tracing/index.js';
import { mayUseModel, requireModel, type AuthContext } from '../auth/index.js';
import { emptyResponse, jsonResponse, readBodyLimited } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { AppEnv } from './app-env.js';
import type { GatewayAppDeps } from './gateway-deps.js';
import { INFER_PATHS } from './hono-infer-route.js';
import { TenantStats } from './tenant-stats.js';
import { applyRateLimit, requestDeadline } from './rate-limit.js';

const MODEL = '/v2/models/:model';
const VERSIONED = '/v2/models/:model/versions/:version{[0-9]+}';

type Handler = (c: Context<AppEnv>) => Response | Promise<Response>;

export interface KserveRoutesContext extends GatewayAppDeps {
  readonly now: () => number;
  readonly draining: () => boolean;
}

export function registerKserveRoutes(app: Hono<AppEnv>, deps: KserveRoutesContext): void {
  const { config, dispatcher, now } = deps;
  const stats = deps.stats ?? new TenantStats();
  const tracer = deps.tracer ?? noopTracer;
  const methodNotAllowed = (): Response => jsonResponse({ error: 'Method Not Allowed' }, 405);
  const route = (path: string, method: 'GET' | 'POST', name: GatewayRoute, handler: Handler): void => {
    app.on(method, path, (c) => {
      c.set('route', name);
      return handler(c);
    });
    app.all(path, methodNotAllowed);
  };
  const modelRoute = (suffix: string, method: 'GET' | 'POST', name: GatewayRoute, handler: Handler): void => {
    route(`${MODEL}${suffix}`, method, name, handler);
    route(`${VERSIONED}${suffix}`, method, name, handler);
  };

  /** Auth is done by the middleware; this checks the model and takes from the rate limit. */
  async function guard(c: Context<AppEnv>, model: string | undefined, elements: number): Promise<AuthContext> {
    const auth = c.get('auth');
    if (auth === undefined) throw TesseraError.internal('auth middleware did not run');
    if (model !== undefined) {
      c.set('model', model);
      requireModel(auth, model);
    }
    await inSpan(tracer, 'rate_limit', { parent: c.get('telemetry').span.context() }, () =>
      applyRateLimit(deps.rateLimiter, deps.metrics, auth, elements, (h) => Object.assign(c.get('extraHeaders'), h)),
    );
    return auth;
  }

  /** Metadata and config calls: the gateway's request timeout, shortened by the client's deadline. */
  const metadataContext = (c: Context<AppEnv>): { deadline: number; signal: AbortSignal } => ({
    deadline: requestDeadline(c.req.raw.headers, now(), config.requestTimeoutMs),
    signal: c.req.raw.signal,
  });

  route('/v2/health/live', 'GET', 'health', () => emptyResponse(deps.draining() ? 503 : 200));
  route('/v2/health/ready', 'GET', 'health', () => emptyResponse(deps.draining() ? 503 : (deps.isReady?.() ?? true) ? 200 : 400));

  route('/v2', 'GET', 'server', async (c) => {
    await guard(c, undefined, 0);
    return jsonResponse({
      name: config.serverName,
      version: deps.version ?? '0.1.0',
      extensions: ['binary_tensor_data', 'model_configuration', 'statistics', 'model_repository'],
    });
  });

  /** The fleet's models this tenant may use, with each version's readiness. */
  const allowedModels = (auth: AuthContext) => (dispatcher.models?.() ?? []).filter((m) => mayUseModel(auth, m.name));

  route('/v2/repository/index', 'POST', 'repository_index', async (c) => {
    const auth = await guard(c, undefined, 0);
    const body = await readBodyLimited(c.req.raw, 64 * 1024);
    const readyOnly = parseReadyFlag(body);
    const index: Record<string, unknown>[] = [];
    for (const model of allowedModels(auth)) {
      const versions = model.versions.filter((v) => !readyOnly || v.ready);
      if (versions.length === 0 && !readyOnly) {
        index.push({ name: model.name, state: 'UNAVAILABLE', reason: 'no node is serving it' });
      }
      for (const v of versions) {
        index.push({ name: model.name, version: v.version, state: v.ready ? 'READY' : 'UNAVAILABLE', ...(v.ready ? {} : { reason: 'no node is serving it' }) });
      }
    }
    return jsonResponse(index);
  });

  route('/v2/models/stats', 'GET', 'model_statistics', async (c) => {
    const auth = await guard(c, undefined, 0);
    return jsonResponse(stats.snapshot(auth.tenant.id));
  });
  modelRoute('/stats', 'GET', 'model_statistics', async (c) => {
    const [model, version] = modelOf(c);
    const auth = await guard(c, model, 0);
    return jsonResponse(stats.snapshot(auth.tenant.id, { model, ...(version === undefined ? {} : { version }) }, [model]));
  });

  modelRoute('', 'GET', 'model_metadata', async (c) => {
    const [model, version] = modelOf(c);
    await guard(c, model, 0);
    return jsonResponse(await dispatcher.modelMetadata(model, version, metadataContext(c)));
  });
  modelRoute('/ready', 'GET', 'model_ready', async (c) => {
    const [model, version] = modelOf(c);
    await guard(c, model, 0);
    return emptyResponse(dispatcher.modelReady(model, version) ? 200 : 400);
  });
  modelRoute('/config', 'GET', 'model_config', async (c) => {
    const [model, version] = modelOf(c);
    await guard(c, model, 0);
    return jsonResponse(await dispatcher.modelConfig(model, version, metadataContext(c)));
  });
  for (const path of INFER_PATHS) app.all(path, methodNotAllowed);
}

/** The model name and optional version; a version keeps its value but not its leading zeros. */
function modelOf(c: Context<AppEnv>): [string, string | undefined] {
  const version = c.req.param('version');
  return [c.req.param('model') ?? '', version === undefined ? undefined : BigInt(version).toString()];
}

/** `{"ready": true}` in a repository-index body; an empty body, or no flag, lists every model. */
function parseReadyFlag(body: Uint8Array): boolean {
  if (body.length === 0) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw TesseraError.invalidArg('failed to parse the request JSON buffer');
  }
  return typeof parsed === 'object' && parsed !== null && (parsed as { ready?: unknown }).ready === true;
}
