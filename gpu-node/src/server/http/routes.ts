/**
 * The route table of the node's HTTP endpoint (port 8000): KServe v2 plus Triton's extensions.
 *
 * What we answer, route by route (Triton's status codes unless noted):
 * - GET  /v2/health/live, /v2/health/ready        200 or 400, empty body (503 + error while exiting)
 * - GET  /v2                                       server metadata
 * - GET  /v2/models/{m}[/versions/{v}]            model metadata
 * - GET  /v2/models/{m}[/versions/{v}]/ready      200 or 400, empty body; unknown model → 400 (Triton's INVALID_ARG), unknown version → 404
 * - GET  /v2/models/{m}[/versions/{v}]/config     normalized ModelConfig as Triton JSON
 * - POST /v2/models/{m}[/versions/{v}]/infer      JSON, binary, mixed, raw (Inference-Header-Content-Length: 0)
 * - POST /v2/models/{m}[/versions/{v}]/generate[_stream]   Triton's generate extension: one JSON
 *        answer, or Server-Sent Events (generate-route.ts)
 * - GET /v1/models[/{id}], POST /v1/completions, /v1/chat/completions   the OpenAI-compatible API
 *        (server/openai/), errors in OpenAI's shape
 * - GET  /v2/models/stats, /v2/models/{m}[/versions/{v}]/stats   {"model_stats":[...]}
 * - POST /v2/repository/index                      [{name, version?, state?, reason?}]
 * - POST /v2/repository/models/{m}/load|unload     200, empty body
 * - POST /v2/repository/{repo}/...                 501 "'repository_name' specification is not supported"
 * - GET  /v2/trace/setting, /v2/models/{m}/trace/setting   tracing is OFF; POST → 501 (settings-routes.ts)
 * - GET/POST /v2/logging                           real settings (settings-routes.ts)
 * - /v2/{system,cuda}sharedmemory/...              status [] (named region 404), register 501,
 *                                                  unregister 200 (shared-memory-routes.ts)
 * - a known path with another method → 405 {"error":"Method Not Allowed"}; anything else → 404
 *   {"error":"Not Found"}. A version segment is digits only (anything else is an unknown path → 404).
 * - request bodies may be gzip/deflate; another Content-Encoding → 501 "Unsupported compression type"
 *   plus `Accept-Encoding: gzip, deflate`.
 * - every route belongs to one of Triton's API categories; a category restricted with
 *   --http-restricted-api answers 403 "This API is restricted, expecting header '<header>'" to a request
 *   without that header and value, before the route runs (restricted-apis.ts).
 */
import type { Context } from 'hono';
import { Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { modelConfigToTritonJson } from '../../../../shared/src/model-config/index.js';
import type { NodeCore } from '../../server-api/index.js';
import {
  allowedBy,
  httpRestrictedMessage,
  NO_RESTRICTIONS,
  type RestrictedCategory,
  type Restriction,
  type Restrictions,
} from '../restricted-apis.js';
import { registerOpenAIRoutes } from '../openai/openai-routes.js';
import { handleGenerate } from './generate-route.js';
import { handleInfer } from './infer-route.js';
import { handleLoad, handleRepositoryIndex, handleUnload } from './repository-routes.js';
import {
  emptyResponse,
  errorResponse,
  jsonResponse,
  METHOD_NOT_ALLOWED_BODY,
  NOT_FOUND_BODY,
  type HttpLogger,
} from './responses.js';
import type { HttpLimits } from './server-options.js';
import { handleGetTrace, handlePostLogging, handlePostTrace, type LogSettingsStore } from './settings-routes.js';
import {
  handleSharedMemoryRegister,
  handleSharedMemoryStatus,
  handleSharedMemoryUnregister,
  type SharedMemoryKind,
} from './shared-memory-routes.js';

export interface RoutesContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
  readonly logger: HttpLogger;
  readonly logSettings: LogSettingsStore;
  /** --http-restricted-api; none by default. */
  readonly restrictions?: Restrictions;
}

type Handler = (c: Context) => Response | Promise<Response>;
type Methods = Partial<Record<'GET' | 'POST', Handler>>;

const MODEL = '/v2/models/:model';
const VERSIONED = '/v2/models/:model/versions/:version{[0-9]+}';

export function buildApp(context: RoutesContext): Hono {
  const { core } = context;
  const app = new Hono();
  const restrictions = context.restrictions ?? NO_RESTRICTIONS;
  const route = (path: string, methods: Methods, category: RestrictedCategory): void => {
    const restriction = restrictions.get(category);
    for (const [method, handler] of Object.entries(methods)) {
      app.on(method, path, restriction === undefined ? handler : (c) => guarded(restriction, handler, c));
    }
    // Registered after the real handlers, so it only answers the methods they do not take.
    app.all(path, () => jsonResponse(METHOD_NOT_ALLOWED_BODY, 405));
  };
  // Both spellings of every model route: without a version (latest ready) and with one.
  const modelRoute = (suffix: string, methods: Methods, category: RestrictedCategory): void => {
    route(`${MODEL}${suffix}`, methods, category);
    route(`${VERSIONED}${suffix}`, methods, category);
  };

  route('/v2/health/live', { GET: () => emptyResponse(core.isLive() ? 200 : 400) }, 'health');
  route('/v2/health/ready', { GET: () => emptyResponse(core.isReady() ? 200 : 400) }, 'health');
  route('/v2', { GET: () => jsonResponse(core.serverMetadata()) }, 'metadata');

  // Before `/v2/models/:model`, so "stats" is not taken for a model name.
  route('/v2/models/stats', { GET: () => jsonResponse({ model_stats: core.statistics() }) }, 'statistics');
  modelRoute('', { GET: (c) => jsonResponse(core.modelMetadata(...modelOf(c))) }, 'metadata');
  modelRoute('/ready', { GET: (c) => emptyResponse(core.isModelReady(...modelOf(c)) ? 200 : 400) }, 'health');
  modelRoute('/config', { GET: (c) => configResponse(core, ...modelOf(c)) }, 'model-config');
  modelRoute('/stats', { GET: (c) => jsonResponse({ model_stats: core.statistics(...modelOf(c)) }) }, 'statistics');
  modelRoute('/infer', { POST: (c) => handleInfer(context, c.req.raw, ...modelOf(c)) }, 'inference');
  modelRoute('/generate', { POST: (c) => handleGenerate(context, c.req.raw, ...modelOf(c), false) }, 'inference');
  modelRoute('/generate_stream', { POST: (c) => handleGenerate(context, c.req.raw, ...modelOf(c), true) }, 'inference');

  // The OpenAI-compatible API (server/openai/), inference like /infer as far as restrictions go.
  registerOpenAIRoutes((path, methods) => route(path, methods, 'inference'), context);

  const repository = (path: string, handler: Handler): void => route(path, { POST: handler }, 'model-repository');
  repository('/v2/repository/index', (c) => handleRepositoryIndex(context, c.req.raw));
  repository('/v2/repository/models/:model/load', (c) => handleLoad(context, c.req.raw, modelNameOf(c)));
  repository('/v2/repository/models/:model/unload', (c) => handleUnload(context, c.req.raw, modelNameOf(c)));
  const namedRepository = (): Response => {
    throw TesseraError.unsupported("'repository_name' specification is not supported");
  };
  repository('/v2/repository/:repo/index', namedRepository);
  repository('/v2/repository/:repo/models/:model/load', namedRepository);
  repository('/v2/repository/:repo/models/:model/unload', namedRepository);

  route('/v2/trace/setting', { GET: () => handleGetTrace(context), POST: (c) => handlePostTrace(context, c.req.raw) }, 'trace');
  route(
    `${MODEL}/trace/setting`,
    {
      GET: (c) => handleGetTrace(context, c.req.param('model') ?? ''),
      POST: (c) => handlePostTrace(context, c.req.raw, c.req.param('model') ?? ''),
    },
    'trace',
  );
  route(
    '/v2/logging',
    {
      GET: () => jsonResponse(context.logSettings.current),
      POST: (c) => handlePostLogging(context, context.logSettings, c.req.raw),
    },
    'logging',
  );

  for (const kind of ['system', 'cuda'] as const) sharedMemoryRoutes(route, kind);

  app.notFound(() => jsonResponse(NOT_FOUND_BODY, 404));
  app.onError((error, c) => cancelledOr(error, c.req.raw, context.logger));
  return app;
}

function sharedMemoryRoutes(route: (path: string, methods: Methods, category: RestrictedCategory) => void, kind: SharedMemoryKind): void {
  const base = `/v2/${kind}sharedmemory`;
  const shm = (path: string, methods: Methods): void => route(path, methods, 'shared-memory');
  shm(`${base}/status`, { GET: () => handleSharedMemoryStatus(kind) });
  shm(`${base}/region/:region/status`, { GET: (c) => handleSharedMemoryStatus(kind, c.req.param('region') ?? '') });
  shm(`${base}/region/:region/register`, { POST: () => handleSharedMemoryRegister(kind) });
  shm(`${base}/unregister`, { POST: () => handleSharedMemoryUnregister() });
  shm(`${base}/region/:region/unregister`, { POST: () => handleSharedMemoryUnregister() });
}

/** A restricted route: tritonserver's 403 unless the request carries the header with its value. */
function guarded(restriction: Restriction, handler: Handler, c: Context): Response | Promise<Response> {
  if (!allowedBy(restriction, c.req.header(restriction.header))) {
    return jsonResponse({ error: httpRestrictedMessage(restriction) }, 403);
  }
  return handler(c);
}

/** The `:model` segment, percent-decoded by the router; checked by the core (shared/src/names). */
function modelNameOf(c: Context): string {
  return c.req.param('model') ?? '';
}

/** The model name and the optional version; a version keeps its value but not its leading zeros. */
function modelOf(c: Context): [string, string | undefined] {
  const version = c.req.param('version');
  return [c.req.param('model') ?? '', version === undefined ? undefined : BigInt(version).toString()];
}

function configResponse(core: NodeCore, name: string, version: string | undefined): Response {
  return jsonResponse(modelConfigToTritonJson(core.modelConfig(name, version)));
}

/**
 * After the client went away, whatever the core threw (an AbortError, a stream error) is the
 * consequence of the cancellation, not a bug: answer CANCELLED (nobody reads it) and log nothing.
 */
function cancelledOr(error: unknown, request: Request, logger: HttpLogger): Response {
  if (request.signal.aborted && !(error instanceof TesseraError)) {
    return errorResponse(TesseraError.cancelled('the client closed the connection'), logger, request);
  }
  return errorResponse(error, logger, request);
}
