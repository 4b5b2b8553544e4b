/**
 * The LLM routes a tenant sees through the gateway, on Hono:
 * - GET  /v1/models, /v1/models/{id}         the LLM models the fleet serves that this key may use
 * - POST /v1/completions, /v1/chat/completions   OpenAI's API, `stream: true` relayed as SSE
 * - POST /v2/models/{m}[/versions/{v}]/generate, .../generate_stream   Triton's generate extension
 * The API key comes as `Authorization: Bearer <key>` (what the openai clients send) or `x-api-key`.
 * The POST routes' work is llm-service.ts (shared with the node:http relay, direct-llm.ts); here it is
 * wired to Hono's context and a streamed answer becomes a Web ReadableStream.
 * /v1 errors are OpenAI's `{"error": {...}}`; generate errors are Triton's `{"error": "..."}` as on
 * the node.
 */
import type { Context, Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { noopTracer } from '../../../../shared/src/tracing/index.js';
import { AuthRejected, mayUseModel } from '../auth/index.js';
import { answerToResponse, jsonResponse, readBodyLimited } from '../http/index.js';
import type { AppEnv } from '../app/app-env.js';
import { authenticateRequest } from '../app/request-cycle.js';
import { relayToReadable } from './event-stream-relay.js';
import { createLlmService, type LlmAnswer, type LlmExchange, type LlmRouteDeps } from './llm-service.js';
import { LlmModelList } from './model-list.js';
import { OpenAIApiError, openAIErrorAnswer } from './openai-error.js';

export type { LlmRouteDeps } from './llm-service.js';

const MODEL = '/v2/models/:model';
const VERSIONED = '/v2/models/:model/versions/:version{[0-9]+}';

function responseOf(answer: LlmAnswer): Response {
  if (answer.stream !== undefined) return new Response(relayToReadable(answer.stream.source, answer.stream.relay), { status: 200, headers: answer.headers });
  return answerToResponse(answer);
}

function exchangeOf(c: Context<AppEnv>): LlmExchange {
  return {
    headers: c.req.raw.headers,
    readBody: (max) => readBodyLimited(c.req.raw, max),
    signal: c.req.raw.signal,
    traceParent: c.get('telemetry').span.context(),
    setRoute: (route) => c.set('route', route),
    setModel: (model) => c.set('model', model),
    setAuth: (auth) => c.set('auth', auth),
    addHeaders: (h) => void Object.assign(c.get('extraHeaders'), h),
  };
}

export function registerLlmRoutes(app: Hono<AppEnv>, deps: LlmRouteDeps): void {
  const { config, metrics, logger, now, llm } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const models = new LlmModelList(llm.router, llm.upstream, config.requestTimeoutMs, now);
  const service = createLlmService(deps);

  /** GET /v1/models[/{id}]: authentication here (the /v2 middleware does it for generate), OpenAI's errors. */
  const modelRoute = (handler: (c: Context<AppEnv>) => Promise<Response>) => async (c: Context<AppEnv>) => {
    c.set('route', 'llm_models');
    try {
      const auth = await authenticateRequest(deps.tenants, config.tiers, tracer, c.get('telemetry').span.context(), c.req.raw.headers);
      c.set('auth', auth);
      return await handler(c);
    } catch (error) {
      if (error instanceof AuthRejected) metrics.authRejected(error.reason);
      return answerToResponse(openAIErrorAnswer(error, logger));
    }
  };

  app.get('/v1/models', modelRoute(async (c) => {
    const auth = c.get('auth')!;
    const names = (await models.names(c.req.raw.signal)).filter((name) => mayUseModel(auth, name));
    return jsonResponse({ object: 'list', data: names.map(LlmModelList.entry) });
  }));
  app.get('/v1/models/:model', modelRoute(async (c) => {
    const auth = c.get('auth')!;
    const name = c.req.param('model') ?? '';
    if (!mayUseModel(auth, name) || !(await models.names(c.req.raw.signal)).includes(name)) throw OpenAIApiError.modelNotFound(name);
    return jsonResponse(LlmModelList.entry(name));
  }));

  app.post('/v1/completions', async (c) => responseOf(await service.completion('completion', exchangeOf(c))));
  app.post('/v1/chat/completions', async (c) => responseOf(await service.completion('chat', exchangeOf(c))));

  const generate = (streamed: boolean) => async (c: Context<AppEnv>): Promise<Response> => {
    c.set('route', streamed ? 'generate_stream' : 'generate');
    const auth = c.get('auth');
    if (auth === undefined) throw TesseraError.internal('auth middleware did not run');
    const rawVersion = c.req.param('version');
    const version = rawVersion === undefined ? undefined : BigInt(rawVersion).toString();
    return responseOf(await service.generate(streamed, exchangeOf(c), auth, c.req.param('model') ?? '', version));
  };
  for (const prefix of [MODEL, VERSIONED]) {
    app.post(`${prefix}/generate`, generate(false));
    app.post(`${prefix}/generate_stream`, generate(true));
  }
}
