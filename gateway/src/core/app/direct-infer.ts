/**
 * One infer request served from start to end without Hono: the same steps, in the same order, as the
 * Hono middlewares, the infer route and the error handler of create-gateway-app.ts (request id and
 * root span → authentication → infer-route.ts → extra headers → metric, span end, access line), built
 * from the same functions (request-cycle.ts, request-telemetry.ts, infer-route.ts).
 *
 * Why it exists: on Node, building a Web Request (headers, AbortSignal, body stream) and a Web
 * Response per call, plus Hono's dispatch, cost about a quarter of a cache hit's CPU. The Node entry
 * serves the infer route through this (adapters/node-http/native-infer.ts) and everything else through
 * the Hono app. It is runtime-agnostic: the adapter turns its server's request into a
 * `DirectInferRequest` and writes the `HttpAnswer` back.
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { noopTracer } from '../../../../shared/src/tracing/index.js';
import type { AuthContext } from '../auth/index.js';
import type { HeaderReader, HttpAnswer } from '../http/index.js';
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
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /** Set by an adapter that decoded the request itself (infer-route.ts's InferExchange.decoded). */
  readonly decoded?: InferExchange['decoded'];
  /** A decoupled model's request: its responses as they arrive (InferExchange.onResponse). */
  readonly onResponse?: InferExchange['onResponse'];
}

export type DirectInfer = (request: DirectInferRequest, model: string, version: string | undefined) => Promise<HttpAnswer>;

export function createDirectInfer(deps: GatewayAppDeps & { readonly now: () => number; readonly logger: Logger }): DirectInfer {
  const { config, metrics, logger, now } = deps;
  const tracer = deps.tracer ?? noopTracer;
  return async (request, model, version) => {
    const started = now();
    const telemetry = beginRequest(tracer, 'POST', request.path, request.headers);
    const parent = telemetry.span.context();
    const extra: Record<string, string> = { [REQUEST_ID_HEADER]: telemetry.requestId };
    // As in the Hono app: the route is 'other' until authentication let the request reach the route.
    let route: GatewayRoute = 'other';
    let modelName = '';
    let auth: AuthContext | undefined;
    const facts = (): RequestFacts => ({ tenant: auth?.tenant.id ?? '', tier: auth?.tier.name ?? '', model: modelName, route });
    let answer: HttpAnswer;
    try {
      auth = await authenticateRequest(deps.tenants, config.tiers, tracer, parent, request.headers);
      route = 'infer';
      const exchange: InferExchange = {
        headers: request.headers,
        readBody: (maxBytes) => request.readBody(maxBytes),
        signal: request.signal,
        auth,
        traceParent: parent,
        setModel: (name) => {
          modelName = name;
        },
        addHeaders: (h) => Object.assign(extra, h),
        ...(request.decoded === undefined ? {} : { decoded: request.decoded }),
        ...(request.onResponse === undefined ? {} : { onResponse: request.onResponse }),
      };
      answer = await runInfer(deps, exchange, model, version);
    } catch (error) {
      answer = failureAnswer(error, metrics, logger, telemetry, facts(), request.signal.aborted);
    }
    const headers = withHeaders(answer.headers, extra);
    finishRequest(metrics, logger, telemetry, { method: 'POST', path: request.path }, facts(), answer.status, now() - started);
    return { status: answer.status, headers, body: answer.body };
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
