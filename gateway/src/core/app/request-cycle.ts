/**
 * What happens around every gateway request, whatever serves it: authentication in its span, the
 * answer to a failure, and the request's metric, span end and access line once the status is known.
 *
 * Two callers compose these in the same order: the Hono middlewares and error handler
 * (create-gateway-app.ts), and the infer fast path outside Hono (direct-infer.ts). Keeping the steps
 * here is what makes both answer, count and log a request alike.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { inSpan, type TraceContext, type Tracer } from '../../../../shared/src/tracing/index.js';
import { authenticate, AuthRejected, type AuthContext } from '../auth/index.js';
import { errorAnswer, type HeaderReader, type HttpAnswer } from '../http/index.js';
import type { GatewayMetrics, TenantStore, Tier } from '../ports/index.js';
import { endRequest, requestLogger, type RequestFacts, type RequestTelemetry } from './request-telemetry.js';

/** API key → tenant and tier (401/403 as AuthRejected), in an `auth` span under `parent`. */
export async function authenticateRequest(
  tenants: TenantStore,
  tiers: Readonly<Record<string, Tier>>,
  tracer: Tracer,
  parent: TraceContext | undefined,
  headers: HeaderReader,
): Promise<AuthContext> {
  if (!tracer.enabled) return authenticate(tenants, tiers, headers);
  return inSpan(tracer, 'auth', { parent }, async (span) => {
    const found = await authenticate(tenants, tiers, headers);
    span.setAttribute('tessera.tenant', found.tenant.id);
    span.setAttribute('tessera.tier', found.tier.name);
    return found;
  });
}

/**
 * The answer to a request that threw: the auth-rejection metric, the error logged (when it is ours)
 * with the request's fields, and CANCELLED when the client had gone and the error is only the
 * consequence. `telemetry` is undefined when the failure came before the request was set up.
 */
export function failureAnswer(
  error: unknown,
  metrics: GatewayMetrics,
  logger: Logger,
  telemetry: RequestTelemetry | undefined,
  facts: RequestFacts,
  clientGone: boolean,
): HttpAnswer {
  if (error instanceof AuthRejected) metrics.authRejected(error.reason);
  const log = telemetry === undefined ? logger : requestLogger(logger, telemetry, facts);
  // After the client went away, whatever the dispatcher threw is the consequence: answer CANCELLED.
  if (clientGone && !(error instanceof TesseraError)) {
    return errorAnswer(TesseraError.cancelled('the client closed the connection'), log);
  }
  return errorAnswer(error, log);
}

/** Once the status is known: the request metric, then the root span's end and the access line. */
export function finishRequest(
  metrics: GatewayMetrics,
  logger: Logger,
  telemetry: RequestTelemetry,
  request: { readonly method: string; readonly path: string },
  facts: RequestFacts,
  status: number,
  durationMs: number,
): void {
  metrics.request({ route: facts.route, tenant: facts.tenant, tier: facts.tier, model: facts.model, status, seconds: durationMs / 1000 });
  endRequest(logger, telemetry, request.method, request.path, facts, status, durationMs);
}
