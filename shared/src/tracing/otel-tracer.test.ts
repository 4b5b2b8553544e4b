import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createOtelTracer, createTracing, otlpTracesUrl } from './otel-tracer.js';
import { inSpan, noopTracer } from './tracer.js';
import { parseTraceparent } from './trace-context.js';

const CALLER = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'vendor=x')!;

describe('the OpenTelemetry adapter', () => {
  it('continues a caller trace, links children explicitly and keeps explicit times', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createOtelTracer({ serviceName: 'unit', exporter, scheduledDelayMillis: 0 });
    const root = tracing.tracer.startSpan('root', { parent: CALLER, kind: 'server', attributes: { a: 1, skipped: undefined } });
    expect(root.context()).toMatchObject({ traceId: CALLER.traceId, traceFlags: 1, traceState: 'vendor=x' });
    const child = tracing.tracer.startSpan('child', { parent: root.context(), startTime: 1_700_000_000_000 });
    child.end(1_700_000_000_250.5);
    await expect(
      inSpan(tracing.tracer, 'failing', { parent: root.context() }, () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    root.end();
    // shutdown() would clear the in-memory exporter: flush, read, then shut down.
    await tracing.flush();

    const spans = Object.fromEntries(exporter.getFinishedSpans().map((s) => [s.name, s]));
    expect(Object.keys(spans).sort()).toEqual(['child', 'failing', 'root']);
    expect(spans.root!.parentSpanContext?.spanId).toBe(CALLER.spanId);
    expect(spans.root!.attributes).toEqual({ a: 1 });
    expect(spans.root!.resource.attributes['service.name']).toBe('unit');
    expect(spans.child!.parentSpanContext?.spanId).toBe(root.context()!.spanId);
    expect(spans.child!.startTime).toEqual([1_700_000_000, 0]);
    expect(spans.child!.endTime).toEqual([1_700_000_000, 250_500_000]);
    expect(spans.failing!.status).toMatchObject({ code: 2, message: 'boom' });
    expect(new Set(Object.values(spans).map((s) => s.spanContext().traceId))).toEqual(new Set([CALLER.traceId]));
    await tracing.shutdown();
  });

  it('obeys an unsampled caller: nothing recorded, the context still passed on', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createOtelTracer({ serviceName: 'unit', exporter, scheduledDelayMillis: 0 });
    const span = tracing.tracer.startSpan('quiet', { parent: { ...CALLER, traceFlags: 0 } });
    span.end();
    await tracing.flush();
    expect(span.context()?.traceId).toBe(CALLER.traceId);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    await tracing.shutdown();
  });

  it('is off without an endpoint, and the noop tracer passes the parent through', () => {
    expect(createTracing({ serviceName: 'x' }).tracer).toBe(noopTracer);
    expect(createTracing({ serviceName: 'x', endpoint: '  ' }).endpoint).toBeUndefined();
    expect(noopTracer.startSpan('a', { parent: CALLER }).context()).toBe(CALLER);
    expect(noopTracer.startSpan('a').context()).toBeUndefined();
  });

  it('appends /v1/traces to a base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT means', () => {
    expect(otlpTracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl('http://collector:4318/otlp/')).toBe('http://collector:4318/otlp/v1/traces');
    expect(otlpTracesUrl('https://x.example/v1/traces')).toBe('https://x.example/v1/traces');
    expect(() => otlpTracesUrl('collector:4318')).toThrow(/http\(s\) URL/);
    expect(() => otlpTracesUrl('not a url')).toThrow(/http\(s\) URL/);
  });
});
