/** Per-request values the gateway's middlewares and handlers share through Hono's context. */
import type { AuthContext } from '../auth/index.js';
import type { GatewayRoute } from '../ports/index.js';
import type { Span, Tracer } from '../../../../shared/src/tracing/index.js';

export interface AppEnv {
  Variables: {
    /** Set by the auth middleware on /v2 routes. */
    auth: AuthContext | undefined;
    /** Which route answered, for metrics. */
    route: GatewayRoute;
    /** The model the request concerned ('' when none), for metrics. */
    model: string;
    /** Headers to add to whatever response is sent (RateLimit-*, x-cache), errors included. */
    extraHeaders: Record<string, string>;
    /** The request's root span, request id and trace id (request-telemetry.ts). */
    telemetry: RequestTelemetry;
  };
}

/** The request's root span, request id and trace id, made by request-telemetry.ts. */
export interface RequestTelemetry {
  readonly tracer: Tracer;
  /** The root span of this request. */
  readonly span: Span;
  readonly requestId: string;
  /** The trace this request belongs to (undefined only when tracing is off and no traceparent came). */
  readonly traceId: string | undefined;
}
