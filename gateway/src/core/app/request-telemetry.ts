/**
 * Per-request tracing and logging of the gateway, kept out of the route code:
 * - the root span `gateway.request` (kind server), continuing the client's W3C `traceparent` when it
 *   sent a valid one, else starting a trace;
 * - the request id: the client's `x-request-id` when it is a sane token, else a fresh UUID; echoed
 *   in the answer's `x-request-id` header;
 * - the request's logger: a child with `traceId`, `requestId`, `tenant` and `model` (the last two as
 *   soon as auth and routing know them), and one access line per request (health and metrics
 *   probes excepted). API keys never reach it: only the tenant id does, and the logger redacts key
 *   fields anyway (shared/src/logging). The access line carries the same fields as a line of that
 *   child, but is written without making one: a pino child per request was a measurable part of a
 *   cache hit's cost.
 * Both the Hono middleware (create-gateway-app.ts) and the infer fast path (direct-infer.ts) use these,
 * so they take the method, path and headers rather than a Web Request.
 * The tracer is a port (shared/src/tracing), default noop: the core never imports an SDK.
 */
import type { Context } from 'hono';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { extractTraceContext, type TraceScope, type Tracer } from '../../../../shared/src/tracing/index.js';
import type { HeaderReader } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { AppEnv, RequestTelemetry } from './app-env.js';

export type { RequestTelemetry } from './app-env.js';

export const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
/** Routes polled by probes and scrapers: traced, but no access line. */
const QUIET_ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>(['health', 'metrics']);


/** `path`: the URL's path as sent (no query); it is only recorded. */
export function beginRequest(tracer: Tracer, method: string, path: string, headers: HeaderReader): RequestTelemetry {
  const parent = extractTraceContext((name) => headers.get(name));
  const span = tracer.startSpan('gateway.request', {
    parent,
    kind: 'server',
    ...(tracer.enabled ? { attributes: { 'http.request.method': method, 'url.path': path } } : {}),
  });
  const offered = headers.get(REQUEST_ID_HEADER)?.trim();
  const requestId = offered !== undefined && SANE_REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
  span.setAttribute('tessera.request_id', requestId);
  return { tracer, span, requestId, traceId: span.context()?.traceId };
}

/** Children of the request's root span (auth, rate_limit, cache) hang on this scope. */
export function requestScope(telemetry: RequestTelemetry): TraceScope {
  return { tracer: telemetry.tracer, parent: telemetry.span.context() };
}

/** What is known about the request so far; tenant and model are '' until auth and routing ran. */
export interface RequestFacts {
  readonly tenant: string;
  readonly tier: string;
  readonly model: string;
  readonly route: GatewayRoute;
}

export function factsOf(c: Context<AppEnv>): RequestFacts {
  const auth = c.get('auth');
  return { tenant: auth?.tenant.id ?? '', tier: auth?.tier.name ?? '', model: c.get('model'), route: c.get('route') };
}

/** The request's logger: the fields that tie a line to a trace, a request, a tenant and a model. */
export function requestLogger(base: Logger, telemetry: RequestTelemetry, facts: RequestFacts): Logger {
  return base.child({
    ...(telemetry.traceId === undefined ? {} : { traceId: telemetry.traceId }),
    requestId: telemetry.requestId,
    ...(facts.tenant === '' ? {} : { tenant: facts.tenant }),
    ...(facts.model === '' ? {} : { model: facts.model }),
  });
}

/** Ends the root span (status ≥ 500 marks it failed) and writes the access line. */
export function endRequest(
  base: Logger,
  telemetry: RequestTelemetry,
  method: string,
  path: string,
  facts: RequestFacts,
  status: number,
  durationMs: number,
): void {
  const { span } = telemetry;
  if (telemetry.tracer.enabled) {
    span.setAttribute('http.response.status_code', status);
    span.setAttribute('http.route', facts.route);
    if (facts.tenant !== '') span.setAttribute('tessera.tenant', facts.tenant);
    if (facts.tier !== '') span.setAttribute('tessera.tier', facts.tier);
    if (facts.model !== '') span.setAttribute('tessera.model', facts.model);
    if (status >= 500) span.setError(new Error(`HTTP ${status}`));
  }
  span.end();
  if (QUIET_ROUTES.has(facts.route)) return;
  // The fields of requestLogger's child, in the same order, then the line's own. One literal of a fixed
  // shape (no spreads): an undefined field is left out of the line, as the child leaves it out.
  base.info('request', {
    traceId: telemetry.traceId,
    requestId: telemetry.requestId,
    tenant: facts.tenant === '' ? undefined : facts.tenant,
    model: facts.model === '' ? undefined : facts.model,
    method,
    path,
    route: facts.route,
    status,
    durationMs: Math.round(durationMs * 1000) / 1000,
  });
}

/** The path of a request URL (absolute, or origin-form as node:http gives it), without the query. */
export function pathOf(url: string): string {
  return new URL(url, 'http://localhost').pathname;
}
