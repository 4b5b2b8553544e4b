/**
 * `POST /v2/models/{m}[/versions/{v}]/infer` after authentication: the model check, the body, the
 * rate limit, async jobs (`Prefer: respond-async`), the cache and the dispatch, and the answer with
 * `x-cache` (and `Age` on a stored hit).
 *
 * Written against `InferExchange` and run by DirectInfer (direct-infer.ts), whatever front door the
 * request came through. The order of checks is part of the contract:
 * model permission before the body is read (a forbidden model costs no decoding), decoding before the
 * rate limit (it takes the tensor elements), the rate limit before any queue or cache.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { decodeInferRequestBody, INFER_HEADER_LENGTH, type DecodedInferRequest } from '../../../../shared/src/kserve/index.js';
import { elementCount, type InferRequest, type InferResponse } from '../../../../shared/src/tensors/index.js';
import { inSpan, noopTracer, type TraceContext } from '../../../../shared/src/tracing/index.js';
import { requireModel, tenantScope, type AuthContext } from '../auth/index.js';
import { bypassRunOf, withResponseId } from '../cache/index.js';
import { cancelSignalOf, readTierBody, type CancelSignal, type Cancellation, type HeaderReader, type HttpAnswer } from '../http/index.js';
import { acceptJobAnswer, asyncPreference, isQueueTimeoutRejection, webhookGuardFor } from '../jobs/index.js';
import type { CacheRunResult } from '../cache/index.js';
import type { AnsweredResponse, GatewayAppDeps } from './gateway-deps.js';
import { DECOUPLED_STREAM_TIMEOUT_MS } from './decoupled-models.js';
import { EncodedOnRead } from './encoded-on-read.js';
import { applyRateLimit, requestDeadline } from './rate-limit.js';


/** What the infer logic needs of one request and of the code serving it. */
export interface InferExchange {
  readonly headers: HeaderReader;
  /** The whole body (decompressed), or INVALID_ARG past `maxBytes`. */
  readBody(maxBytes: number): Promise<Uint8Array>;
  /** The client going away (its signal made only where it is handed on: never for a cache hit). */
  readonly cancel: Cancellation;
  /** Set by authentication; undefined only when it did not run (a wiring bug: INTERNAL). */
  readonly auth: AuthContext | undefined;
  /** The request's root span, parent of the rate_limit, cache, admission and upstream spans. */
  readonly traceParent: TraceContext | undefined;
  /** Records the model the request concerns (metrics, logs), as soon as it is known. */
  setModel(model: string): void;
  /** Headers for whatever answer is sent, errors included (RateLimit-*). */
  addHeaders(headers: Record<string, string>): void;
  /**
   * The request already decoded by its protocol adapter (the gRPC front door), whose `readBody` then
   * gives its message as received (for the size limits); undefined: `readBody` is a KServe HTTP body.
   */
  readonly decoded?: DecodedInferRequest | undefined;
  /**
   * The front door writes a produced answer from `HttpAnswer.inferResponse` and never reads its body
   * (the gRPC front door): such an answer comes with `body: null` and only `x-cache` as headers.
   */
  readonly answersFromResponse?: boolean | undefined;
  /** A decoupled model's request (gRPC front door): its responses as they arrive; never cached. */
  readonly onResponse?: ((response: InferResponse) => void) | undefined;
}

export type InferRouteDeps = Pick<
  GatewayAppDeps,
  'config' | 'dispatcher' | 'cache' | 'rateLimiter' | 'metrics' | 'tracer' | 'jobs' | 'jobObserver' | 'stats' | 'resolveHost'
> & { readonly now: () => number };

export async function runInfer(deps: InferRouteDeps, exchange: InferExchange, model: string, version: string | undefined): Promise<HttpAnswer> {
  const { config, dispatcher, now } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const { headers } = exchange;
  // The model check comes before reading the body: a forbidden model costs us no decoding.
  if (exchange.auth !== undefined) {
    exchange.setModel(model);
    requireModel(exchange.auth, model);
  }
  // The tier's largest request (413 above it) when it is below the gateway-wide maxBodyBytes (400).
  const tier = exchange.auth?.tier;
  const body = tier === undefined ? await exchange.readBody(config.maxBodyBytes) : await readTierBody((max) => exchange.readBody(max), config.maxBodyBytes, tier);
  const headerLength = exchange.decoded === undefined ? headers.get(INFER_HEADER_LENGTH) : null;
  if (headerLength !== null && headerLength.trim() === '0') {
    throw TesseraError.unsupported(
      `raw binary requests (Inference-Header-Content-Length: 0) are not supported by the gateway for model '${model}'; send the JSON header`,
    );
  }
  const decoded = exchange.decoded ?? decodeInferRequestBody({ body, headerLength, modelName: model, ...(version === undefined ? {} : { modelVersion: version }) });
  let elements = 0;
  for (const tensor of decoded.request.inputs) elements += elementCount(tensor.shape);
  const auth = exchange.auth;
  if (auth === undefined) throw TesseraError.internal('auth middleware did not run');
  exchange.setModel(model);
  requireModel(auth, model);
  const setHeaders = (h: Record<string, string>): void => exchange.addHeaders(h);
  if (!tracer.enabled) await applyRateLimit(deps.rateLimiter, deps.metrics, auth, elements, setHeaders, body.length);
  else await inSpan(tracer, 'rate_limit', { parent: exchange.traceParent }, () => applyRateLimit(deps.rateLimiter, deps.metrics, auth, elements, setHeaders, body.length));

  // `Prefer: respond-async[, spill-over]` (core/jobs/prefer-header.ts); ignored without a job queue.
  // Jobs store a KServe body: only requests that came as one can become a job.
  const preference = deps.jobs === undefined || exchange.decoded !== undefined ? undefined : asyncPreference(headers.get('prefer'));
  const toJob = (spilled: boolean): Promise<HttpAnswer> =>
    acceptJobAnswer(
      deps.jobs!,
      { auth, model, version, body, headerLength, headers, spilled },
      {
        ...(deps.jobObserver === undefined ? {} : { observer: deps.jobObserver }),
        now,
        extraHeaders: { 'Preference-Applied': 'respond-async' },
        webhooks: { guard: webhookGuardFor(config.webhooks), ...(deps.resolveHost === undefined ? {} : { resolve: deps.resolveHost }) },
      },
    );
  if (preference?.always === true) return toJob(false);
  const scope = tenantScope(auth.tenant);
  const deadline = requestDeadline(headers, now(), auth.tier.queueTimeoutMs);
  const root = exchange.traceParent;
  // A decoupled stream waits in the queue as long as the tier says, then runs until the client's own
  // deadline (grpc-timeout), at most DECOUPLED_STREAM_TIMEOUT_MS.
  const streamed =
    exchange.onResponse === undefined
      ? {}
      : { onResponse: exchange.onResponse, streamDeadline: requestDeadline(headers, now(), DECOUPLED_STREAM_TIMEOUT_MS) };
  // This request's own upstream answer (a hit or a coalesced wait leaves it unset): HttpAnswer.inferResponse.
  let producedResponse: InferResponse | undefined;
  // Its answer as produced: framed with the client's id when nothing else read its body (answerWithId).
  let producedAnswer: EncodedOnRead | undefined;
  // The admission and upstream spans hang under `parent`: the cache span when the cache runs.
  const produceUnder = (parent: TraceContext | undefined) => async (request: InferRequest, upstreamSignal: CancelSignal): Promise<AnsweredResponse> => {
    const result = await dispatcher.dispatch(
      { ...request, id: '' },
      { tenantId: auth.tenant.id, tenantScope: scope, tier: auth.tier, deadline, signal: upstreamSignal, headers, trace: { tracer, parent }, ...streamed },
    );
    producedResponse = result.response;
    producedAnswer = new EncodedOnRead(result.response, { binaryOutputDefault: decoded.binaryOutputDefault, outputBinary: decoded.outputBinary }, result.computeUs ?? 0);
    return producedAnswer;
  };
  const runCache = (parent: TraceContext | undefined): Promise<CacheRunResult> =>
    deps.cache!.run({
      tenantId: auth.tenant.id,
      tenantScope: scope,
      tier: auth.tier,
      request: decoded.request,
      binaryOutputDefault: decoded.binaryOutputDefault,
      headers,
      cancel: exchange.cancel,
      produce: produceUnder(parent),
    });
  let cached: CacheRunResult;
  const started = now();
  try {
    if (deps.cache === undefined || exchange.onResponse !== undefined) {
      cached = bypassRunOf(await produceUnder(root)(decoded.request, cancelSignalOf(exchange.cancel)));
    } else if (!tracer.enabled) {
      cached = await runCache(root);
    } else {
      cached = await inSpan(tracer, 'cache', { parent: root }, async (span) => {
        const run = await runCache(span.context());
        span.setAttribute('tessera.cache.status', run.status);
        return run;
      });
    }
  } catch (error) {
    if (preference?.spillOver === true && isQueueTimeoutRejection(error)) return toJob(true);
    deps.stats?.record(auth.tenant.id, model, version ?? '', 'fail', now() - started, now());
    throw error;
  }
  deps.stats?.record(auth.tenant.id, model, version ?? '', 'success', now() - started, now(), cached.status);
  const inferResponse = cached.status === 'HIT' ? undefined : producedResponse;
  // A front door that writes its own answer from the response (gRPC) reads no body: one not stored is never encoded.
  if (exchange.answersFromResponse === true && inferResponse !== undefined) return { status: 200, headers: { 'x-cache': cached.status }, body: null, inferResponse };
  const framed = inferResponse === undefined ? undefined : producedAnswer?.answerWithId(decoded.request.id);
  if (framed !== undefined) {
    framed.headers['x-cache'] = cached.status;
    return { status: 200, headers: framed.headers, body: framed.body, inferResponse };
  }
  const result = withResponseId(cached, decoded.request.id);
  // One copy of the entry's headers (it is shared with the cache), with x-cache and Age on it.
  const answerHeaders: Record<string, string> = { ...result.headers, 'x-cache': cached.status };
  if ('ageMs' in cached && cached.ageMs !== undefined) answerHeaders.Age = String(Math.floor(cached.ageMs / 1000));
  return { status: 200, headers: answerHeaders, body: result.body, inferResponse };
}
