/**
 * The LLM POST routes' work, free of any server API, so the Hono routes (llm-routes.ts) and the
 * node:http relay (direct-llm.ts with adapters/node-http/native-llm.ts) answer alike:
 * - `completion`: POST /v1/completions and /v1/chat/completions, errors in OpenAI's shape;
 * - `generate`: Triton's generate and generate_stream (the caller authenticated), errors thrown as
 *   TesseraErrors for the caller's Triton error answer.
 *
 * Order of work (llm-forward.ts does the rest): auth -> body (the tier's largest request) -> parse
 * (OpenAI-style 400s) -> model permission (an unknown and a forbidden model get the same 404, so a key
 * learns nothing of other tenants' models) -> request rate limit -> prompt tokens charged (429; on a
 * bound, the count settled after the first event: prompt-charge.ts) -> the completion cache
 * (deterministic, non-streamed, tier opt-in) -> admission, node, relay. A streamed request on the node:http
 * fast path is sent to its node first, the rate limit and prompt tokens decided after the turn that writes it, and
 * refused before any byte reaches the client when they say no (admission-overlap.ts).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import { noopTracer, type TraceContext } from '../../../../shared/src/tracing/index.js';
import { AuthRejected, mayUseModel, requireModel, type AuthContext } from '../auth/index.js';
import { readTierBody, type CancelSignal, type HeaderReader, type HttpAnswer } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { GatewayAppDeps } from '../app/gateway-deps.js';
import { applyRateLimit, requestDeadline } from '../app/rate-limit.js';
import { authenticateRequest } from '../app/request-cycle.js';
import { completionCacheKey, completionCacheTtl } from './completion-cache.js';
import { DEFAULT_MAX_PROMPT_CHARS, type LlmDeps } from './llm-deps.js';
import { forwardLlm, SSE_HEADERS, type LlmForwardDeps, type LlmForwardRequest, type StreamedAnswer, type WholeAnswer } from './llm-forward.js';
import { parseLlmApiRequest, STRICT_UTF8, type LlmApiKind } from './llm-request.js';
import { OpenAIApiError, openAIErrorAnswer } from './openai-error.js';
import { admitPrompt, type PromptCharge } from './prompt-charge.js';
import { forwardWhileAdmitting, RecentRefusals, UndecidedSends } from './admission-overlap.js';

/** What the routes use of the app's dependencies. */
export type LlmRouteDeps = Pick<GatewayAppDeps, 'config' | 'tenants' | 'rateLimiter' | 'metrics' | 'logger' | 'tracer'> & {
  readonly now: () => number;
  readonly llm: LlmDeps;
};

/** One LLM request as the server gives it, and where the route's findings go. */
export interface LlmExchange {
  readonly headers: HeaderReader;
  /** The whole body, or INVALID_ARG past `maxBytes`. */
  readBody(maxBytes: number): Promise<Uint8Array>;
  /** Aborts when the client goes away. */
  readonly signal: CancelSignal;
  /** Aborts `signal`, when the caller owns its controller (passed on as LlmForwardRequest.abort, which says why). */
  readonly abort?: () => void;
  readonly traceParent: TraceContext | undefined;
  setRoute(route: GatewayRoute): void;
  setModel(model: string): void;
  setAuth(auth: AuthContext): void;
  /** Headers for the answer, whatever it is (rate-limit headers). */
  addHeaders(headers: Record<string, string>): void;
  /** Writes an admitted stream to the client in the turn the node's head comes (LlmForwardRequest.startStream); absent: through the answer. */
  readonly startStream?: (stream: StreamedAnswer) => boolean;
}

/** An answer; `stream` set: a 200 whose body is that relayed stream (`body` is null). */
export interface LlmAnswer extends HttpAnswer {
  readonly stream?: StreamedAnswer;
}

export interface LlmService {
  completion(kind: LlmApiKind, exchange: LlmExchange): Promise<LlmAnswer>;
  generate(streamed: boolean, exchange: LlmExchange, auth: AuthContext, model: string, version: string | undefined): Promise<LlmAnswer>;
}

export function createLlmService(deps: LlmRouteDeps): LlmService {
  const { config, metrics, logger, now, llm } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const maxPromptChars = llm.settings?.maxPromptChars ?? DEFAULT_MAX_PROMPT_CHARS;
  const refusals = new RecentRefusals();
  const undecided = new UndecidedSends();
  // Made once the tokenizer is loaded: the same for every request, so no object or await per request.
  let forwarding: LlmForwardDeps | undefined;
  const loadForwardDeps = async (): Promise<LlmForwardDeps> => {
    const counter = await llm.tokenCounter();
    return (forwarding ??= {
      router: llm.router,
      upstream: llm.upstream,
      rateLimiter: deps.rateLimiter,
      metrics,
      counter,
      answerTimeoutMs: config.requestTimeoutMs,
      ...(llm.settings?.chargeEveryTokens === undefined ? {} : { chargeEvery: llm.settings.chargeEveryTokens }),
    });
  };

  /**
   * Prompt checks and charges shared by both APIs: length guard, request rate, prompt tokens (on a
   * bound when the budget has room: settle the answer once the first event is out, prompt-charge.ts).
   */
  async function admitPromptTokens(exchange: LlmExchange, auth: AuthContext, model: string, promptText: string, bytes: number, tokens: TokenCounter): Promise<PromptCharge> {
    const addHeaders = (h: Record<string, string>): void => exchange.addHeaders(h);
    await applyRateLimit(deps.rateLimiter, metrics, auth, 0, addHeaders, bytes);
    if (promptText.length > maxPromptChars) {
      throw OpenAIApiError.invalid(
        `the prompt has ${promptText.length} characters; the gateway accepts at most ${maxPromptChars}. Please reduce the length of the prompt.`,
        'prompt',
        'context_length_exceeded',
      );
    }
    const onSettleError = (error: unknown): void => logger.warn('prompt token settlement failed', { error: String(error) });
    return admitPrompt({ limiter: deps.rateLimiter, metrics, auth, model, counter: tokens, setHeaders: addHeaders, onSettleError }, promptText);
  }

  /** admitPromptTokens, a refusal remembered for the tenant (its next requests are decided before sending). */
  function admitNoting(exchange: LlmExchange, auth: AuthContext, model: string, promptText: string, bytes: number, tokens: TokenCounter): Promise<PromptCharge> {
    return admitPromptTokens(exchange, auth, model, promptText, bytes, tokens).catch((error: unknown) => {
      const refused = error instanceof OpenAIApiError ? error.status === 429 : error instanceof TesseraError && error.code === 'RESOURCE_EXHAUSTED';
      if (refused) refusals.note(auth.tenant.id, now(), (error as { retryAfterMs?: number }).retryAfterMs);
      throw error;
    });
  }

  /**
   * Admits and forwards: a stream whose tenant was not refused lately and has no other undecided stream, with a
   * way to stop its node request (`exchange.abort`, the node:http path), is sent while admission is decided;
   * anything else is admitted first.
   */
  async function admitAndForward(
    forward: LlmForwardDeps,
    exchange: LlmExchange,
    auth: AuthContext,
    promptText: string,
    bytes: number,
    request: Omit<LlmForwardRequest, 'afterFirstWrite' | 'startStream'>,
  ): Promise<WholeAnswer | StreamedAnswer> {
    const abort = exchange.abort;
    const tenant = auth.tenant.id;
    if (!request.stream || abort === undefined || promptText.length > maxPromptChars || refusals.refused(tenant, now()) || !undecided.begin(tenant)) {
      const charge = await admitNoting(exchange, auth, request.model, promptText, bytes, forward.counter);
      return forwardSettling(forward, exchange, request, charge);
    }
    // Decided after this turn's work, which sends the node its request when a node and a socket are ready: the
    // limits' CPU (and any wait for Redis) then runs while the node works, not before its request leaves.
    const admission = new Promise<PromptCharge>((resolve) => setImmediate(() => resolve(admitNoting(exchange, auth, request.model, promptText, bytes, forward.counter))));
    // The tenant's next stream may go before its decision once this one's is known, either way.
    admission.then(() => undecided.end(tenant), () => undecided.end(tenant));
    const startStream = exchange.startStream;
    return forwardWhileAdmitting({
      admission,
      forward: (settle, admitted) =>
        forwardLlm(forward, {
          ...request,
          afterFirstWrite: settle,
          admission,
          // Started at the node's head only once admitted; else it waits for the decision, as before.
          ...(startStream === undefined ? {} : { startStream: (stream: StreamedAnswer) => admitted() && startStream(stream) }),
        }),
      cancelUpstream: abort,
    });
  }

  /** Forwards an admitted request, its prompt's charge settled after the first event (a stream) or the answer (else). */
  async function forwardSettling(
    forward: LlmForwardDeps,
    exchange: LlmExchange,
    request: Omit<LlmForwardRequest, 'afterFirstWrite' | 'startStream'>,
    charge: PromptCharge,
  ): Promise<WholeAnswer | StreamedAnswer> {
    let answer: WholeAnswer | StreamedAnswer;
    try {
      answer = await forwardLlm(forward, { ...request, afterFirstWrite: charge.settle, ...(exchange.startStream === undefined ? {} : { startStream: exchange.startStream }) });
    } catch (error) {
      charge.settle();
      throw error;
    }
    if (answer.kind === 'whole') charge.settle();
    return answer;
  }

  const streamAnswer = (stream: StreamedAnswer): LlmAnswer => ({ status: 200, headers: { ...SSE_HEADERS }, body: null, stream });

  async function completion(kind: LlmApiKind, exchange: LlmExchange): Promise<LlmAnswer> {
    const route: GatewayRoute = kind === 'chat' ? 'chat_completions' : 'completions';
    exchange.setRoute(route);
    try {
      const auth = await authenticateRequest(deps.tenants, config.tiers, tracer, exchange.traceParent, exchange.headers);
      exchange.setAuth(auth);
      const raw = await readTierBody((max) => exchange.readBody(max), config.maxBodyBytes, auth.tier);
      const request = parseLlmApiRequest(kind, raw);
      exchange.setModel(request.model);
      if (!mayUseModel(auth, request.model)) {
        metrics.authRejected('forbidden_model');
        throw OpenAIApiError.modelNotFound(request.model);
      }
      if (!llm.router.known(request.model)) throw OpenAIApiError.modelNotFound(request.model);
      const forward = forwarding ?? (await loadForwardDeps());
      const ttl = llm.cache === undefined ? 0 : completionCacheTtl(auth, request);
      const key = ttl > 0 ? completionCacheKey(llm.cache!.prefix, auth, request) : undefined;
      // A cacheable request is admitted before the cache is read (a hit is charged too).
      let charge: PromptCharge | undefined;
      if (key !== undefined) {
        charge = await admitNoting(exchange, auth, request.model, request.promptText, raw.length, forward.counter);
        const hit = await llm.cache!.store.get(key).catch(() => undefined);
        if (hit !== undefined) {
          charge.settle();
          return { status: 200, headers: { ...hit.headers, 'x-cache': 'HIT', Age: String(Math.max(0, Math.floor((now() - hit.storedAt) / 1000))) }, body: hit.body };
        }
      }
      const forwarded: Omit<LlmForwardRequest, 'afterFirstWrite' | 'startStream'> = {
        auth,
        model: request.model,
        path: kind === 'chat' ? '/v1/chat/completions' : '/v1/completions',
        body: raw,
        stream: request.stream,
        format: 'openai',
        deadline: requestDeadline(exchange.headers, now(), auth.tier.queueTimeoutMs),
        signal: exchange.signal,
        ...(exchange.abort === undefined ? {} : { abort: exchange.abort }),
      };
      const answer = charge === undefined
        ? await admitAndForward(forward, exchange, auth, request.promptText, raw.length, forwarded)
        : await forwardSettling(forward, exchange, forwarded, charge);
      if (answer.kind === 'stream') return streamAnswer(answer);
      if (key !== undefined && answer.status === 200) {
        const entry = { body: answer.body, headers: { 'Content-Type': answer.contentType }, computeUs: 0, storedAt: now() };
        await llm.cache!.store.set(key, entry, ttl).catch((error: unknown) => logger.warn('completion cache store failed', { error: String(error) }));
      }
      return { status: answer.status, headers: { 'Content-Type': answer.contentType, 'x-cache': key === undefined ? 'BYPASS' : 'MISS' }, body: answer.body };
    } catch (error) {
      if (error instanceof AuthRejected) metrics.authRejected(error.reason);
      return openAIErrorAnswer(error, logger);
    }
  }

  /** Triton's generate extension; errors stay Triton's (thrown), token refusals become RESOURCE_EXHAUSTED. */
  async function generate(streamed: boolean, exchange: LlmExchange, auth: AuthContext, model: string, version: string | undefined): Promise<LlmAnswer> {
    exchange.setRoute(streamed ? 'generate_stream' : 'generate');
    exchange.setModel(model);
    requireModel(auth, model);
    const raw = await readTierBody((max) => exchange.readBody(max), config.maxBodyBytes, auth.tier);
    let body: unknown;
    try {
      body = JSON.parse(STRICT_UTF8.decode(raw));
    } catch {
      throw TesseraError.invalidArg('failed to parse the request JSON buffer');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw TesseraError.invalidArg('the generate request must be a JSON object');
    if (!llm.router.known(model)) throw TesseraError.invalidArg(`Request for unknown model: '${model}' is not found`);
    const textInput = (body as { text_input?: unknown }).text_input;
    try {
      const forward = forwarding ?? (await loadForwardDeps());
      const promptText = typeof textInput === 'string' ? textInput : '';
      const path = `/v2/models/${encodeURIComponent(model)}${version === undefined ? '' : `/versions/${version}`}/${streamed ? 'generate_stream' : 'generate'}`;
      const answer = await admitAndForward(forward, exchange, auth, promptText, raw.length, {
        auth,
        model,
        path,
        body: raw,
        stream: streamed,
        format: 'generate',
        deadline: requestDeadline(exchange.headers, now(), auth.tier.queueTimeoutMs),
        signal: exchange.signal,
        ...(exchange.abort === undefined ? {} : { abort: exchange.abort }),
      });
      if (answer.kind === 'stream') return streamAnswer(answer);
      return { status: answer.status, headers: { 'Content-Type': answer.contentType }, body: answer.body };
    } catch (error) {
      if (!(error instanceof OpenAIApiError)) throw error;
      exchange.addHeaders(error.headers);
      const code = error.status === 429 ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARG';
      throw new TesseraError(code, error.message, error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs });
    }
  }

  return { completion, generate };
}
