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
 * Every route but health needs an API key; model routes need a key whose tier and tenant allow the model.
 */
import type { Context, Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { decodeInferRequestBody, encodeInferResponse } from '../../../../shared/src/kserve/index.js';
import { elementCount, type InferRequest } from '../../../../shared/src/tensors/index.js';
import { inSpan, noopTracer, type TraceContext } from '../../../../shared/src/tracing/index.js';
import { withResponseId } from '../cache/index.js';
import { requireModel, type AuthContext } from '../auth/index.js';
import { acceptJob, asyncPreference, isQueueTimeoutRejection } from '../jobs/index.js';
import { emptyResponse, jsonResponse, readBodyLimited } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { AppEnv } from './app-env.js';
import type { CacheRunResult, GatewayAppDeps, ProducedResponse } from './gateway-deps.js';
import { applyRateLimit, requestDeadline } from './rate-limit.js';

const MODEL = '/v2/models/:model';
const VERSIONED = '/v2/models/:model/versions/:version{[0-9]+}';
const INFER_HEADER_LENGTH = 'inference-header-content-length';

type Handler = (c: Context<AppEnv>) => Response | Promise<Response>;

export interface KserveRoutesContext extends GatewayAppDeps {
  readonly now: () => number;
  readonly draining: () => boolean;
}

export function registerKserveRoutes(app: Hono<AppEnv>, deps: KserveRoutesContext): void {
  const { config, dispatcher, now } = deps;
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
    return jsonResponse({ name: 'tessera-gateway', version: deps.version ?? '0.1.0', extensions: ['binary_tensor_data', 'model_configuration'] });
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
  modelRoute('/infer', 'POST', 'infer', async (c) => {
    const [model, version] = modelOf(c);
    // The model check comes before reading the body: a forbidden model costs us no decoding.
    const auth = c.get('auth');
    if (auth !== undefined) {
      c.set('model', model);
      requireModel(auth, model);
    }
    const body = await readBodyLimited(c.req.raw, config.maxBodyBytes);
    const headerLength = c.req.header(INFER_HEADER_LENGTH) ?? null;
    if (headerLength !== null && headerLength.trim() === '0') {
      throw TesseraError.unsupported(
        `raw binary requests (Inference-Header-Content-Length: 0) are not supported by the gateway for model '${model}'; send the JSON header`,
      );
    }
    const decoded = decodeInferRequestBody({ body, headerLength, modelName: model, ...(version === undefined ? {} : { modelVersion: version }) });
    const elements = decoded.request.inputs.reduce((n, t) => n + elementCount(t.shape), 0);
    await guard(c, model, elements);
    // `Prefer: respond-async[, spill-over]` (core/jobs/prefer-header.ts); ignored without a job queue.
    const preference = deps.jobs === undefined ? undefined : asyncPreference(c.req.header('prefer'));
    const toJob = (spilled: boolean): Promise<Response> =>
      acceptJob(
        deps.jobs!,
        { auth: auth!, model, version, body, headerLength, headers: c.req.raw.headers, spilled },
        { ...(deps.jobObserver === undefined ? {} : { observer: deps.jobObserver }), now, extraHeaders: { 'Preference-Applied': 'respond-async' } },
      );
    if (preference?.always === true) return toJob(false);
    const signal = c.req.raw.signal;
    const deadline = requestDeadline(c.req.raw.headers, now(), auth!.tier.queueTimeoutMs);
    const root = c.get('telemetry').span.context();
    // The admission and upstream spans hang under `parent`: the cache span when the cache runs.
    const produceUnder = (parent: TraceContext | undefined) => async (request: InferRequest, upstreamSignal: AbortSignal): Promise<ProducedResponse> => {
      const result = await dispatcher.dispatch(
        { ...request, id: '' },
        { tenantId: auth!.tenant.id, tier: auth!.tier, deadline, signal: upstreamSignal, headers: c.req.raw.headers, trace: { tracer, parent } },
      );
      const encoded = encodeInferResponse(result.response, {
        binaryOutputDefault: decoded.binaryOutputDefault,
        outputBinary: decoded.outputBinary,
      });
      return { body: encoded.body, headers: encoded.headers, computeUs: result.computeUs ?? 0, modelVersion: result.response.modelVersion };
    };
    let cached: CacheRunResult;
    try {
      cached =
        deps.cache === undefined
          ? { ...(await produceUnder(root)(decoded.request, signal)), status: 'BYPASS' as const }
          : await inSpan(tracer, 'cache', { parent: root }, async (span) => {
              const run = await deps.cache!.run({
                tenantId: auth!.tenant.id,
                tier: auth!.tier,
                request: decoded.request,
                binaryOutputDefault: decoded.binaryOutputDefault,
                headers: c.req.raw.headers,
                signal,
                produce: produceUnder(span.context()),
              });
              span.setAttribute('tessera.cache.status', run.status);
              return run;
            });
    } catch (error) {
      if (preference?.spillOver === true && isQueueTimeoutRejection(error)) return toJob(true);
      throw error;
    }
    const result = withResponseId(cached, decoded.request.id);
    const extra: Record<string, string> = { 'x-cache': cached.status };
    if ('ageMs' in cached && cached.ageMs !== undefined) extra.Age = String(Math.floor(cached.ageMs / 1000));
    return new Response(result.body, { status: 200, headers: { ...result.headers, ...extra } });
  });
}

/** The model name and optional version; a version keeps its value but not its leading zeros. */
function modelOf(c: Context<AppEnv>): [string, string | undefined] {
  const version = c.req.param('version');
  return [c.req.param('model') ?? '', version === undefined ? undefined : BigInt(version).toString()];
}
