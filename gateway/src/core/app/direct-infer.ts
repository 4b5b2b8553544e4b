/**
 * One infer request from start to end, the one pipeline every front door drives: request id and root
 * span → authentication → infer-route.ts (model check, body, rate limit, jobs, cache, dispatch) → extra
 * headers → metric, span end, access line; failures answered as the app's error handler does, from the
 * same functions (request-cycle.ts, request-telemetry.ts).
 *
 * Its adapters translate protocol and nothing else: the Hono route (hono-infer-route.ts: Workers and
 * `app.fetch`), the Node fast path (adapters/node-http/native-infer.ts, which spares each call the Web
 * Request/Response objects and Hono's dispatch: about a quarter of a cache hit's CPU), and the gRPC
 * front door. Each turns its request into a `DirectInferRequest` and writes the `HttpAnswer` back.
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { noopTracer, type TraceContext } from '../../../../shared/src/tracing/index.js';
import type { AuthContext } from '../auth/index.js';
import { cancellationOf, type Cancellation, type HeaderReader, type HttpAnswer } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { GatewayAppDeps } from './gateway-deps.js';
import { runInfer, type InferExchange } from './infer-route.js';
import { authenticateRequest, failureAnswer, finishRequest } from './request-cycle.js';
import { beginRequest, REQUEST_ID_HEADER, type RequestFacts } from './request-telemetry.js';

/** What the fast path needs of an infer request; the model and version come from its path. */
export interface DirectInferRequest {
  /** The URL's path as sent, without the query (for the access line and the span). */
  readonly path: string;
  readonly headers: HeaderReader;
  /** The whole body, or INVALID_ARG past `maxBytes`. */
  readBody(maxBytes: number): Promise<Uint8Array>;
  /** Aborts when the client goes away. Not read when `cancel` is given. */
  readonly signal: AbortSignal;
  /**
   * Set by an adapter that can tell the client left without a signal (its `signal` then made on
   * first read): a cache hit never makes one (http/cancellation.ts says why).
   */
  readonly cancel?: Cancellation;
  /** Set by an adapter that decoded the request itself (infer-route.ts's InferExchange.decoded). */
  readonly decoded?: InferExchange['decoded'];
  /** A decoupled model's request: its responses as they arrive (InferExchange.onResponse). */
  readonly onResponse?: InferExchange['onResponse'];
  /** The adapter writes a produced answer from its `inferResponse`, never its body (InferExchange.answersFromResponse). */
  readonly answersFromResponse?: boolean;
}

/** The answer's `headers` object is made for it: the adapter may add its own (Content-Length) in place. */
export type DirectInfer = (request: DirectInferRequest, model: string, version: string | undefined) => Promise<HttpAnswer>;

/**
 * One request's state on the fast path, in one object of a fixed shape: the exchange the infer route
 * works on and the facts its metric and access line report. Why a class: the literal with closures
 * (setModel, addHeaders, readBody, the facts) and spreads it replaces cost a hit several allocations.
 */
class DirectExchange implements InferExchange, RequestFacts {
  readonly headers: HeaderReader;
  readonly cancel: Cancellation;
  readonly decoded: InferExchange['decoded'];
  readonly onResponse: InferExchange['onResponse'];
  readonly answersFromResponse: boolean;
  /** Set once authentication accepted the key. */
  auth: AuthContext | undefined = undefined;
  /** As in the Hono app: the route is 'other' until authentication let the request reach the route. */
  route: GatewayRoute = 'other';
  model = '';
  /** The answer's extra headers (the request id, RateLimit-*), errors included. */
  readonly extra: Record<string, string>;

  constructor(
    private readonly request: DirectInferRequest,
    readonly traceParent: TraceContext | undefined,
    requestId: string,
  ) {
    this.headers = request.headers;
    this.cancel = request.cancel ?? cancellationOf(request.signal);
    this.decoded = request.decoded;
    this.onResponse = request.onResponse;
    this.answersFromResponse = request.answersFromResponse === true;
    this.extra = { [REQUEST_ID_HEADER]: requestId };
  }

  get tenant(): string {
    return this.auth?.tenant.id ?? '';
  }

  get tier(): string {
    return this.auth?.tier.name ?? '';
  }

  readBody(maxBytes: number): Promise<Uint8Array> {
    return this.request.readBody(maxBytes);
  }

  setModel(name: string): void {
    this.model = name;
  }

  addHeaders(headers: Record<string, string>): void {
    Object.assign(this.extra, headers);
  }
}

export function createDirectInfer(deps: GatewayAppDeps & { readonly now: () => number; readonly logger: Logger }): DirectInfer {
  const { config, metrics, logger, now } = deps;
  const tracer = deps.tracer ?? noopTracer;
  return async (request, model, version) => {
    const started = now();
    const telemetry = beginRequest(tracer, 'POST', request.path, request.headers);
    const exchange = new DirectExchange(request, telemetry.span.context(), telemetry.requestId);
    let answer: HttpAnswer;
    try {
      exchange.auth = await authenticateRequest(deps.tenants, config.tiers, tracer, exchange.traceParent, request.headers);
      exchange.route = 'infer';
      answer = await runInfer(deps, exchange, model, version);
    } catch (error) {
      answer = failureAnswer(error, metrics, logger, telemetry, exchange, exchange.cancel.aborted);
    }
    const headers = withHeaders(answer.headers, exchange.extra);
    finishRequest(metrics, logger, telemetry, { method: 'POST', path: request.path }, exchange, answer.status, now() - started);
    return { status: answer.status, headers, body: answer.body, inferResponse: answer.inferResponse };
  };
}

/**
 * `extra` set over `headers` the way Web Headers#set does it: a name replaces any spelling of itself.
 * `extra` holds a few names (the request id, RateLimit-*): they are compared without building a set
 * per request, and `headers` is copied only when one of its names is replaced.
 */
export function withHeaders(headers: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  const extraNames: string[] = [];
  for (const name in extra) extraNames.push(name.toLowerCase());
  let replaced = false;
  for (const name in headers) {
    if (extraNames.includes(name.toLowerCase())) {
      replaced = true;
      break;
    }
  }
  if (!replaced) return { ...headers, ...extra };
  const out: Record<string, string> = {};
  for (const name in headers) if (!extraNames.includes(name.toLowerCase())) out[name] = headers[name]!;
  return Object.assign(out, extra);
}
