import { createRequire } from 'node:module';
import type * as PerfHooks from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import { createPromMetrics, EVENT_LOOP_SAMPLE_MS } from './prom-metrics.js';

const labels = { tenant: 't1', model: 'simple', version: '1' };

/** The exposition's sample lines of one metric family (name followed by `{` or a space). */
async function samples(metrics: ReturnType<typeof createPromMetrics>, name: string): Promise<string[]> {
  const { body } = await metrics.render();
  return body.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('prom metrics', () => {
  it('samples the event-loop lag on a timer of EVENT_LOOP_SAMPLE_MS, not prom-client\'s 10 ms that woke an idle gateway 100 times a second', async () => {
    // prom-client reads perf_hooks through require(): the same module object is spied on here.
    const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks;
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    try {
      const metrics = createPromMetrics();
      expect(monitor).toHaveBeenCalledWith({ resolution: EVENT_LOOP_SAMPLE_MS });
      expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100);
      expect(await samples(metrics, 'tessera_gateway_nodejs_eventloop_lag_p99_seconds')).toHaveLength(1);
    } finally {
      monitor.mockRestore();
    }
  });

  it('labels a model the fleet view does not list yet by its name once it answered 2xx, and made-up names as unknown', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    metrics.setModelFilter(() => false);
    metrics.request({ route: 'infer', tenant: 'a', tier: 'premium', model: 'simple', status: 200, seconds: 0.001 });
    metrics.request({ route: 'infer', tenant: 'a', tier: 'premium', model: 'made_up', status: 400, seconds: 0.001 });
    expect(await samples(metrics, 'tessera_gateway_requests_total')).toEqual([
      'tessera_gateway_requests_total{route="infer",tenant="a",tier="premium",model="simple",status="200"} 1',
      'tessera_gateway_requests_total{route="infer",tenant="a",tier="premium",model="unknown",status="400"} 1',
    ]);
  });

  it('exposes the cache counters as direct increments would, and what was added between scrapes', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    metrics.miss(labels);
    metrics.hit(labels, { bytes: 100, computeUs: 1500, source: 'local' });
    metrics.hit(labels, { bytes: 50, computeUs: 500, source: 'coalesced' });
    metrics.bypass({ ...labels, tenant: 't2' }, 'no-store');
    expect(await samples(metrics, 'tessera_gateway_cache_requests_total')).toEqual([
      'tessera_gateway_cache_requests_total{tenant="t1",model="simple",version="1",result="miss"} 1',
      'tessera_gateway_cache_requests_total{tenant="t1",model="simple",version="1",result="hit"} 2',
      'tessera_gateway_cache_requests_total{tenant="t2",model="simple",version="1",result="bypass"} 1',
    ]);
    expect(await samples(metrics, 'tessera_gateway_cache_served_bytes_total')).toEqual([
      'tessera_gateway_cache_served_bytes_total{tenant="t1",model="simple",version="1"} 150',
    ]);
    expect(await samples(metrics, 'tessera_gateway_cache_compute_saved_seconds_total')).toEqual([
      'tessera_gateway_cache_compute_saved_seconds_total{tenant="t1",model="simple",version="1"} 0.002',
    ]);
    expect(await samples(metrics, 'tessera_gateway_cache_hits_by_source_total')).toEqual([
      'tessera_gateway_cache_hits_by_source_total{model="simple",source="local"} 1',
      'tessera_gateway_cache_hits_by_source_total{model="simple",source="coalesced"} 1',
    ]);
    metrics.hit(labels, { bytes: 10, computeUs: 0, source: 'local' });
    expect(await samples(metrics, 'tessera_gateway_cache_hits_by_source_total')).toContain(
      'tessera_gateway_cache_hits_by_source_total{model="simple",source="local"} 2',
    );
    expect(await samples(metrics, 'tessera_gateway_cache_served_bytes_total')).toEqual([
      'tessera_gateway_cache_served_bytes_total{tenant="t1",model="simple",version="1"} 160',
    ]);
  });

  it('counts each series right when consecutive calls alternate, and when the fleet starts listing a model', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    const a = { route: 'infer', tenant: 'a', tier: 'premium', model: 'simple', status: 200, seconds: 0.001 } as const;
    for (const o of [a, { ...a, status: 429 }, a, { ...a, tenant: 'b' }, a]) metrics.request(o);
    expect(await samples(metrics, 'tessera_gateway_requests_total')).toEqual([
      'tessera_gateway_requests_total{route="infer",tenant="a",tier="premium",model="simple",status="200"} 3',
      'tessera_gateway_requests_total{route="infer",tenant="a",tier="premium",model="simple",status="429"} 1',
      'tessera_gateway_requests_total{route="infer",tenant="b",tier="premium",model="simple",status="200"} 1',
    ]);
    let listed = false;
    metrics.setModelFilter(() => listed);
    metrics.miss({ tenant: 't1', model: 'fresh', version: '1' });
    listed = true;
    metrics.miss({ tenant: 't1', model: 'fresh', version: '1' });
    metrics.miss({ tenant: 't1', model: 'fresh', version: '2' });
    expect(await samples(metrics, 'tessera_gateway_cache_requests_total')).toEqual([
      'tessera_gateway_cache_requests_total{tenant="t1",model="unknown",version="1",result="miss"} 1',
      'tessera_gateway_cache_requests_total{tenant="t1",model="fresh",version="1",result="miss"} 1',
      'tessera_gateway_cache_requests_total{tenant="t1",model="fresh",version="2",result="miss"} 1',
    ]);
  });

  it('counts requests per label set and observes their latency', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    for (let i = 0; i < 3; i++) metrics.request({ route: 'infer', tenant: 'a', tier: 'premium', model: 'simple', status: 200, seconds: 0.002 });
    metrics.request({ route: 'health', tenant: '', tier: '', model: '', status: 200, seconds: 0.0001 });
    expect(await samples(metrics, 'tessera_gateway_requests_total')).toEqual([
      'tessera_gateway_requests_total{route="infer",tenant="a",tier="premium",model="simple",status="200"} 3',
      'tessera_gateway_requests_total{route="health",tenant="_anonymous",tier="",model="",status="200"} 1',
    ]);
    expect(await samples(metrics, 'tessera_gateway_request_duration_seconds_count')).toEqual([
      'tessera_gateway_request_duration_seconds_count{route="infer",tier="premium",model="simple"} 3',
      'tessera_gateway_request_duration_seconds_count{route="health",tier="",model=""} 1',
    ]);
  });

  it('observes queue waits and upstream calls per series, a model no node serves written "unknown"', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    metrics.setModelFilter((model) => model === 'simple');
    metrics.dispatched?.('simple', 'premium', 2);
    metrics.dispatched?.('simple', 'premium', 40);
    metrics.dispatched?.('made-up', 'premium', 1);
    metrics.upstream?.({ model: 'simple', nodeId: 'n1', outcome: 'OK', durationMs: 3, retry: false });
    metrics.upstream?.({ model: 'simple', nodeId: 'n1', outcome: 'OK', durationMs: 7, retry: false });
    metrics.upstream?.({ model: 'simple', nodeId: 'n1', outcome: 'UNAVAILABLE', durationMs: 1, retry: true });
    expect(await samples(metrics, 'tessera_gateway_queue_wait_seconds_count')).toEqual([
      'tessera_gateway_queue_wait_seconds_count{tier="premium",model="simple"} 2',
      'tessera_gateway_queue_wait_seconds_count{tier="premium",model="unknown"} 1',
    ]);
    expect(await samples(metrics, 'tessera_gateway_queue_wait_seconds_sum')).toEqual([
      'tessera_gateway_queue_wait_seconds_sum{tier="premium",model="simple"} 0.042',
      'tessera_gateway_queue_wait_seconds_sum{tier="premium",model="unknown"} 0.001',
    ]);
    expect(await samples(metrics, 'tessera_gateway_upstream_duration_seconds_count')).toEqual([
      'tessera_gateway_upstream_duration_seconds_count{model="simple",node="n1",outcome="OK"} 2',
      'tessera_gateway_upstream_duration_seconds_count{model="simple",node="n1",outcome="UNAVAILABLE"} 1',
    ]);
    expect(await samples(metrics, 'tessera_gateway_upstream_duration_seconds_bucket')).toContain(
      'tessera_gateway_upstream_duration_seconds_bucket{le="0.005",model="simple",node="n1",outcome="OK"} 1',
    );
  });

  it('counts cache bypasses by model and reason', async () => {
    const metrics = createPromMetrics({ processMetrics: false });
    metrics.bypass(labels, 'no-store');
    metrics.bypass(labels, 'no-store');
    metrics.bypass({ ...labels, tenant: 't2' }, 'store-unavailable');
    expect(await samples(metrics, 'tessera_gateway_cache_bypass_total')).toEqual([
      'tessera_gateway_cache_bypass_total{model="simple",reason="no-store"} 2',
      'tessera_gateway_cache_bypass_total{model="simple",reason="store-unavailable"} 1',
    ]);
    expect(await samples(metrics, 'tessera_gateway_cache_requests_total')).toEqual([
      'tessera_gateway_cache_requests_total{tenant="t1",model="simple",version="1",result="bypass"} 2',
      'tessera_gateway_cache_requests_total{tenant="t2",model="simple",version="1",result="bypass"} 1',
    ]);
  });

  it('writes label values past maxLabelValues as "_other", whatever was remembered before', async () => {
    const metrics = createPromMetrics({ processMetrics: false, maxLabelValues: 2 });
    for (const tenant of ['a', 'b', 'c', 'd', 'a']) metrics.miss({ ...labels, tenant });
    expect(await samples(metrics, 'tessera_gateway_cache_requests_total')).toEqual([
      'tessera_gateway_cache_requests_total{tenant="a",model="simple",version="1",result="miss"} 2',
      'tessera_gateway_cache_requests_total{tenant="b",model="simple",version="1",result="miss"} 1',
      'tessera_gateway_cache_requests_total{tenant="_other",model="simple",version="1",result="miss"} 2',
    ]);
  });
});
