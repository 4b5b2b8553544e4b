/**
 * The LLM routes a tenant sees through the gateway:
 * - GET  /v1/models, /v1/models/{id}         the LLM models the fleet serves that this key may use
 * - POST /v1/completions, /v1/chat/completions   OpenAI's API, `stream: true` relayed as SSE
 * - POST /v2/models/{m}[/versions/{v}]/generate, .../generate_stream   Triton's generate extension
 * The API key comes as `Authorization: Bearer <key>` (what the openai clients send) or `x-api-key`.
 *
 * Order of work (llm-forward.ts does the rest): auth -> body (the tier's largest request) -> parse
 * (OpenAI-style 400s) -> model permission (an unknown and a forbidden model get the same 404, so a key
 * learns nothing of other tenants' models) -> request rate limit -> prompt tokens counted and charged
 * (429) -> the completion cache (deterministic, non-streamed, tier opt-in) -> admission, node, relay.
 * /v1 errors are OpenAI's `{"error": {...}}`; generate errors are Triton's `{"error": "..."}` as on
 * the node.
 */
import type { Context, Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import { noopTracer } from '../../../../shared/src/tracing/index.js';
import { AuthRejected, mayUseModel, requireModel, type AuthContext } from '../auth/index.js';
import { answerToResponse, jsonResponse, readBodyLimited, readTierBody } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { AppEnv } from '../app/app-env.js';
import type { GatewayAppDeps } from '../app/gateway-deps.js';
import { DEFAULT_MAX_PROMPT_CHARS, type LlmDeps } from './llm-deps.js';
import { applyRateLimit, requestDeadline } from '../app/rate-limit.js';
import { authenticateRequest } from '../app/request-cycle.js';
import { completionCacheKey, completionCacheTtl } from './completion-cache.js';
import { forwardLlm, SSE_HEADERS, type LlmForwardDeps, type WholeAnswer, type StreamedAnswer } from './llm-forward.js';
import { parseLlmApiRequest, type LlmApiKind } from './llm-request.js';
import { LlmModelList } from './model-list.js';
import { OpenAIApiError, openAIErrorAnswer } from './openai-error.js';
import { chargePrompt } from './token-budget.js';

/** What the routes use of the app's dependencies. */
export type LlmRouteDeps = Pick<GatewayAppDeps, 'config' | 'tenants' | 'rateLimiter' | 'metrics' | 'logger' | 'tracer'> & {
  readonly now: () => number;
  readonly llm: LlmDeps;
};

const MODEL = '/v2/models/:model';
const VERSIONED = '/v2/models/:model/versions/:version{[0-9]+}';

function answerOf(answer: WholeAnswer | StreamedAnswer, cacheStatus?: string): Response {
  if (answer.kind === 'stream') return new Response(answer.body, { status: 200, headers: SSE_HEADERS });
  const headers: Record<string, string> = { 'Content-Type': answer.contentType };
  if (cacheStatus !== undefined) headers['x-cache'] = cacheStatus;
  return new Response(answer.body, { status: answer.status, headers });
}

export function registerLlmRoutes(app: Hono<AppEnv>, deps: LlmRouteDeps): void {
  const { config, metrics, logger, now, llm } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const maxPromptChars = llm.settings?.maxPromptChars ?? DEFAULT_MAX_PROMPT_CHARS;
  const models = new LlmModelList(llm.router, llm.upstream, config.requestTimeoutMs, now);

  const forwardDeps = async (): Promise<LlmForwardDeps> => ({
    router: llm.router,
    upstream: llm.upstream,
    rateLimiter: deps.rateLimiter,
    metrics,
    counter: await llm.tokenCounter(),
    answerTimeoutMs: config.requestTimeoutMs,
    ...(llm.settings?.chargeEveryTokens === undefined ? {} : { chargeEvery: llm.settings.chargeEveryTokens }),
  });

  /** Prompt checks and charges shared by both APIs: length guard, request rate, prompt tokens. */
  async function admitPrompt(c: Context<AppEnv>, auth: AuthContext, model: string, promptText: string, bytes: number, counter: TokenCounter): Promise<void> {
    const addHeaders = (h: Record<string, string>): void => void Object.assign(c.get('extraHeaders'), h);
    await applyRateLimit(deps.rateLimiter, metrics, auth, 0, addHeaders, bytes);
    if (promptText.length > maxPromptChars) {
      throw OpenAIApiError.invalid(
        `the prompt has ${promptText.length} characters; the gateway accepts at most ${maxPromptChars}. Please reduce the length of the prompt.`,
        'prompt',
        'context_length_exceeded',
      );
    }
    await chargePrompt(deps.rateLimiter, metrics, auth, model, counter.count(promptText), addHeaders);
  }

  /** Authentication for /v1 (the /v2 middleware does it for generate). */
  async function authenticateV1(c: Context<AppEnv>, route: GatewayRoute): Promise<AuthContext> {
    c.set('route', route);
    const auth = await authenticateRequest(deps.tenants, config.tiers, tracer, c.get('telemetry').span.context(), c.req.raw.headers);
    c.set('auth', auth);
    return auth;
  }

  const openAI = (route: GatewayRoute, handler: (c: Context<AppEnv>) => Promise<Response>) => async (c: Context<AppEnv>) => {
    try {
      return await handler(c);
    } catch (error) {
      c.set('route', route);
      if (error instanceof AuthRejected) metrics.authRejected(error.reason);
      return answerToResponse(openAIErrorAnswer(error, logger));
    }
  };

  app.get('/v1/models', openAI('llm_models', async (c) => {
    const auth = await authenticateV1(c, 'llm_models');
    const names = (await models.names(c.req.raw.signal)).filter((name) => mayUseModel(auth, name));
    return jsonResponse({ object: 'list', data: names.map(LlmModelList.entry) });
  }));
  app.get('/v1/models/:model', openAI('llm_models', async (c) => {
    const auth = await authenticateV1(c, 'llm_models');
    const name = c.req.param('model') ?? '';
    if (!mayUseModel(auth, name) || !(await models.names(c.req.raw.signal)).includes(name)) throw OpenAIApiError.modelNotFound(name);
    return jsonResponse(LlmModelList.entry(name));
  }));

  const completion = (kind: LlmApiKind) => {
    const route: GatewayRoute = kind === 'chat' ? 'chat_completions' : 'completions';
    return openAI(route, async (c) => {
      const auth = await authenticateV1(c, route);
      const raw = await readTierBody((max) => readBodyLimited(c.req.raw, max), config.maxBodyBytes, auth.tier);
      const request = parseLlmApiRequest(kind, raw);
      c.set('model', request.model);
      if (!mayUseModel(auth, request.model)) {
        metrics.authRejected('forbidden_model');
        throw OpenAIApiError.modelNotFound(request.model);
      }
      if (!llm.router.known(request.model)) throw OpenAIApiError.modelNotFound(request.model);
      const forward = await forwardDeps();
      await admitPrompt(c, auth, request.model, request.promptText, raw.length, forward.counter);

      const ttl = llm.cache === undefined ? 0 : completionCacheTtl(auth, request);
      const key = ttl > 0 ? completionCacheKey(llm.cache!.prefix, auth, request) : undefined;
      if (key !== undefined) {
        const hit = await llm.cache!.store.get(key).catch(() => undefined);
        if (hit !== undefined) {
          return new Response(hit.body, { status: 200, headers: { ...hit.headers, 'x-cache': 'HIT', Age: String(Math.max(0, Math.floor((now() - hit.storedAt) / 1000))) } });
        }
      }
      const answer = await forwardLlm(forward, {
        auth,
        model: request.model,
        path: kind === 'chat' ? '/v1/chat/completions' : '/v1/completions',
        body: raw,
        stream: request.stream,
        format: 'openai',
        deadline: requestDeadline(c.req.raw.headers, now(), auth.tier.queueTimeoutMs),
        signal: c.req.raw.signal,
      });
      if (answer.kind === 'whole' && key !== undefined && answer.status === 200) {
        const entry = { body: answer.body, headers: { 'Content-Type': answer.contentType }, computeUs: 0, storedAt: now() };
        await llm.cache!.store.set(key, entry, ttl).catch((error: unknown) => logger.warn('completion cache store failed', { error: String(error) }));
      }
      return answerOf(answer, answer.kind === 'whole' ? (key === undefined ? 'BYPASS' : 'MISS') : undefined);
    });
  };
  app.post('/v1/completions', completion('completion'));
  app.post('/v1/chat/completions', completion('chat'));

  /** Triton's generate extension; errors stay Triton's (the app's onError), token refusals become RESOURCE_EXHAUSTED. */
  const generate = (streamed: boolean) => async (c: Context<AppEnv>): Promise<Response> => {
    c.set('route', streamed ? 'generate_stream' : 'generate');
    const auth = c.get('auth');
    if (auth === undefined) throw TesseraError.internal('auth middleware did not run');
    const model = c.req.param('model') ?? '';
    const rawVersion = c.req.param('version');
    const version = rawVersion === undefined ? undefined : BigInt(rawVersion).toString();
    c.set('model', model);
    requireModel(auth, model);
    const raw = await readTierBody((max) => readBodyLimited(c.req.raw, max), config.maxBodyBytes, auth.tier);
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch {
      throw TesseraError.invalidArg('failed to parse the request JSON buffer');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw TesseraError.invalidArg('the generate request must be a JSON object');
    if (!llm.router.known(model)) throw TesseraError.invalidArg(`Request for unknown model: '${model}' is not found`);
    const textInput = (body as { text_input?: unknown }).text_input;
    try {
      const forward = await forwardDeps();
      await admitPrompt(c, auth, model, typeof textInput === 'string' ? textInput : '', raw.length, forward.counter);
      const path = `/v2/models/${encodeURIComponent(model)}${version === undefined ? '' : `/versions/${version}`}/${streamed ? 'generate_stream' : 'generate'}`;
      const answer = await forwardLlm(forward, {
        auth,
        model,
        path,
        body: raw,
        stream: streamed,
        format: 'generate',
        deadline: requestDeadline(c.req.raw.headers, now(), auth.tier.queueTimeoutMs),
        signal: c.req.raw.signal,
      });
      return answerOf(answer);
    } catch (error) {
      if (!(error instanceof OpenAIApiError)) throw error;
      Object.assign(c.get('extraHeaders'), error.headers);
      const code = error.status === 429 ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARG';
      throw new TesseraError(code, error.message, error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs });
    }
  };
  for (const prefix of [MODEL, VERSIONED]) {
    app.post(`${prefix}/generate`, generate(false));
    app.post(`${prefix}/generate_stream`, generate(true));
  }
}
