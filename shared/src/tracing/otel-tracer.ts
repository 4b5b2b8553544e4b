/**
 * The OpenTelemetry adapter of the `Tracer` port: the ONLY file that imports @opentelemetry/*.
 * Entry points (the node's start-node.ts, the gateway's entry-node.ts) import it by path; index.ts
 * does not re-export it.
 *
 * `createTracing({ endpoint, serviceName })`:
 * - no endpoint (neither `--otlp-endpoint` nor OTEL_EXPORTER_OTLP_ENDPOINT): tracing is OFF, the
 *   noop tracer, nothing loaded into the hot path, nothing sent;
 * - an endpoint: a BasicTracerProvider with a BatchSpanProcessor and the OTLP/HTTP exporter, which
 *   posts JSON (`application/json`) to `<endpoint>/v1/traces` (the OTEL_EXPORTER_OTLP_ENDPOINT rule:
 *   the endpoint is a base URL; one already ending in /v1/traces is used as is). The SDK's own OTEL_*
 *   variables still apply (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY, OTEL_TRACES_SAMPLER...).
 *   Sampling defaults to parent-based always-on: a caller's sampled flag is obeyed.
 *
 * Spans are batched (default every 5 s, OTEL_BSP_SCHEDULE_DELAY); `shutdown()` flushes them, so call
 * it when the process stops. An unreachable collector drops spans; it never fails a request.
 */
import { ROOT_CONTEXT, SpanKind as OtelSpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes as OtelAttributes, Span as OtelSpan, SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { TesseraError } from '../errors/index.js';
import type { TraceContext } from './trace-context.js';
import { noopTracer } from './tracer.js';
import type { Attributes, Span, SpanKind, SpanOptions, Tracer } from './tracer.js';

export interface OtelTracerOptions {
  /** service.name of every span (e.g. 'tessera-gateway', 'tessera-node'); required. */
  readonly serviceName: string;
  /** OTLP/HTTP base URL (http or https), e.g. http://collector:4318. Required unless `exporter` is given. */
  readonly endpoint?: string;
  /** Extra resource attributes (service.version, service.instance.id...); default none. */
  readonly resource?: Attributes;
  /** Export through this exporter instead of OTLP (tests); default the OTLP/HTTP exporter. */
  readonly exporter?: SpanExporter;
  /**
   * Batch period in ms; default the SDK's (5000, or OTEL_BSP_SCHEDULE_DELAY). 0 exports every span
   * as it ends (SimpleSpanProcessor): for tests only.
   */
  readonly scheduledDelayMillis?: number;
}

/** A tracer with a lifecycle: what entry points hold. */
export interface TracingHandle {
  readonly tracer: Tracer;
  /** Where spans go; undefined when tracing is off. */
  readonly endpoint: string | undefined;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Flushes and stops; spans started later are dropped. Idempotent. */
  shutdown(): Promise<void>;
}

const KINDS: Record<SpanKind, OtelSpanKind> = {
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  internal: OtelSpanKind.INTERNAL,
};

/** Tracing on when `endpoint` is a non-empty string, off (noop) otherwise. */
export function createTracing(options: Omit<OtelTracerOptions, 'endpoint'> & { readonly endpoint?: string | undefined }): TracingHandle {
  const endpoint = options.endpoint?.trim();
  if ((endpoint === undefined || endpoint === '') && options.exporter === undefined) {
    return { tracer: noopTracer, endpoint: undefined, flush: async () => {}, shutdown: async () => {} };
  }
  return createOtelTracer({ ...options, ...(endpoint === undefined || endpoint === '' ? {} : { endpoint }) });
}

/** The OTLP traces URL of an OTEL_EXPORTER_OTLP_ENDPOINT-style base URL. */
export function otlpTracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw TesseraError.invalidArg(`the OTLP endpoint must be an http(s) URL such as http://collector:4318, got ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw TesseraError.invalidArg(`the OTLP endpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  if (url.pathname.endsWith('/v1/traces')) return url.toString();
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

export function createOtelTracer(options: OtelTracerOptions): TracingHandle {
  let url: string | undefined;
  let exporter = options.exporter;
  if (exporter === undefined) {
    if (options.endpoint === undefined) throw TesseraError.invalidArg('createOtelTracer needs an endpoint or an exporter');
    url = otlpTracesUrl(options.endpoint);
    exporter = new OTLPTraceExporter({ url });
  }
  const processor =
    options.scheduledDelayMillis === 0
      ? new SimpleSpanProcessor(exporter)
      : new BatchSpanProcessor(exporter, options.scheduledDelayMillis === undefined ? {} : { scheduledDelayMillis: options.scheduledDelayMillis });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...cleanAttributes(options.resource), 'service.name': options.serviceName }),
    spanProcessors: [processor],
  });
  const otel = provider.getTracer('tessera');

  const tracer: Tracer = {
    enabled: true,
    startSpan(name: string, spanOptions: SpanOptions = {}): Span {
      const parent = spanOptions.parent;
      const context = parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, toSpanContext(parent));
      const span = otel.startSpan(
        name,
        {
          kind: KINDS[spanOptions.kind ?? 'internal'],
          attributes: cleanAttributes(spanOptions.attributes),
          ...(spanOptions.startTime === undefined ? {} : { startTime: spanOptions.startTime }),
        },
        context,
      );
      return wrap(span);
    },
  };

  let stopped: Promise<void> | undefined;
  return {
    tracer,
    endpoint: url,
    flush: () => provider.forceFlush(),
    shutdown: () => (stopped ??= provider.shutdown()),
  };
}

function wrap(span: OtelSpan): Span {
  return {
    setAttribute(key, value) {
      if (value !== undefined) span.setAttribute(key, value);
    },
    setError(error) {
      const message = error instanceof Error ? error.message : String(error);
      span.recordException(error instanceof Error ? error : { message });
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    },
    end(endTime) {
      span.end(endTime);
    },
    context() {
      const c = span.spanContext();
      const state = c.traceState?.serialize();
      return { traceId: c.traceId, spanId: c.spanId, traceFlags: c.traceFlags, ...(state ? { traceState: state } : {}) };
    },
  };
}

function toSpanContext(parent: TraceContext): SpanContext {
  return {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.traceFlags,
    // Local parents are passed the same way; "remote" only changes which parent-based sampler applies,
    // and both default to following the sampled flag.
    isRemote: true,
    ...(parent.traceState === undefined ? {} : { traceState: new TraceState(parent.traceState) }),
  };
}

function cleanAttributes(attributes: Attributes | undefined): OtelAttributes {
  const out: OtelAttributes = {};
  for (const [key, value] of Object.entries(attributes ?? {})) if (value !== undefined) out[key] = value;
  return out;
}
