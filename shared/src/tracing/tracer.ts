/**
 * The tracing port. Code that makes spans takes a `Tracer` (default `noopTracer`) and never imports
 * an SDK (docs/architecture.md: telemetry is injected). The OpenTelemetry adapter is otel-tracer.ts,
 * imported only by entry points; it is NOT re-exported from index.ts so the gateway core and the
 * Workers build never pull the SDK in.
 *
 * Parents are explicit (`parent: TraceContext`): no ambient context manager, so the same code works
 * on Node, on Workers and across the async hops of queues and batchers.
 */
import type { TraceContext } from './trace-context.js';

export type AttributeValue = string | number | boolean;
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

/** OpenTelemetry's span kinds that we use: a request received, a request sent, anything inside. */
export type SpanKind = 'server' | 'client' | 'internal';

export interface SpanOptions {
  /** The span this one is a child of (local or from a `traceparent`); absent → a new trace. */
  readonly parent?: TraceContext | undefined;
  /** Default 'internal'. */
  readonly kind?: SpanKind;
  /** Undefined values are skipped. */
  readonly attributes?: Attributes;
  /** Start time in ms since the epoch (fractions allowed); default now. For spans measured elsewhere. */
  readonly startTime?: number;
}

export interface Span {
  /** An undefined value is ignored. */
  setAttribute(key: string, value: AttributeValue | undefined): void;
  /** Marks the span failed: status ERROR with the error's message, plus an exception event. */
  setError(error: unknown): void;
  /** Ends the span, now or at `endTime` (ms since the epoch). Later calls are ignored. */
  end(endTime?: number): void;
  /**
   * The context children and downstream calls use as parent. A noop span returns its parent's, so
   * an incoming `traceparent` still reaches the next process when tracing is off here.
   */
  context(): TraceContext | undefined;
}

export interface Tracer {
  /** False for the noop tracer: callers may skip building costly attributes. */
  readonly enabled: boolean;
  startSpan(name: string, options?: SpanOptions): Span;
}

/** What a callee needs to make child spans: the tracer and the parent to hang them on. */
export interface TraceScope {
  readonly tracer: Tracer;
  readonly parent: TraceContext | undefined;
}

function noopSpan(parent: TraceContext | undefined): Span {
  return {
    setAttribute: () => {},
    setError: () => {},
    end: () => {},
    context: () => parent,
  };
}

const ROOT_NOOP_SPAN = noopSpan(undefined);

/** Tracing off: records nothing, allocates almost nothing, passes the parent context through. */
export const noopTracer: Tracer = {
  enabled: false,
  startSpan: (_name, options) => (options?.parent === undefined ? ROOT_NOOP_SPAN : noopSpan(options.parent)),
};

/**
 * Runs `work` inside a span: ends it when the work settles, marks it failed when the work throws.
 * The span is handed to `work` for attributes and as the parent of its children.
 */
export async function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: Span) => Promise<T> | T): Promise<T> {
  const span = tracer.startSpan(name, options);
  try {
    return await work(span);
  } catch (error) {
    span.setError(error);
    throw error;
  } finally {
    span.end();
  }
}
