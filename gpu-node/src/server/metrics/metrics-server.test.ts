import { createRequire } from 'node:module';
import type * as PerfHooks from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ModelStatsSnapshot } from '../../models/index.js';
import { createMetricsServer, EVENT_LOOP_SAMPLE_MS, parseMeminfo, parseNvidiaSmiQuery } from './index.js';
import type { MetricsServer } from './index.js';

function snapshot(model: string, version: string, n: number): ModelStatsSnapshot {
  return {
    model,
    version,
    requestSuccess: 10 * n,
    requestFailure: { REJECTED: 1 * n, CANCELED: 2 * n, BACKEND: 3 * n, OTHER: 0 },
    inferenceCount: 40 * n,
    executionCount: 5 * n,
    pendingRequests: 7 * n,
    // 5n executions in all, as executionCount says: n of size 1, 3n of size 8, n of size 100.
    batchSizes: [
      { batchSize: 1, executions: n },
      { batchSize: 8, executions: 3 * n },
      { batchSize: 100, executions: n },
    ],
    requestDurationUs: 1000 * n,
    queueDurationUs: 200 * n,
    computeInputDurationUs: 30 * n,
    computeInferDurationUs: 600 * n,
    computeOutputDurationUs: 20 * n,
    lastInferenceMs: 1_700_000_000_000,
    // n requests answered first within 100 ms, one more at 700 ms.
    firstResponse: { buckets: [n, n, n + 1, n + 1], count: n + 1, sumMs: 50 * n + 700 },
  };
}

// Two GPUs as nvidia-smi prints them; the second has no power reading.
const SMI_SAMPLE = [
  'GPU-11111111-2222-3333-4444-555555555555, 37, 81559, 1024, 71.52, 700.00',
  'GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee, 0, 81559, 4, [N/A], [N/A]',
  '',
].join('\n');

let snapshots: ModelStatsSnapshot[] = [];
const source = { statsSnapshots: () => snapshots };
let server: MetricsServer | undefined;

afterEach(async () => {
  await server?.close(100);
  server = undefined;
});

async function scrape(options: Parameters<typeof createMetricsServer>[1] = {}, path = '/metrics') {
  server = createMetricsServer(source, { gpuQuery: async () => null, ...options });
  const { port } = await server.listen(0, '127.0.0.1');
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text(), port };
}

/** The value of one series line, e.g. value(text, 'nv_inference_count{model="a",version="1"}'). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics endpoint', () => {
  it("samples the event-loop lag every EVENT_LOOP_SAMPLE_MS, not prom-client's 10 ms that woke an idle node 100 times a second", async () => {
    // prom-client reads perf_hooks through require(): the same module object is spied on here.
    const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks;
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    try {
      server = createMetricsServer({ statsSnapshots: () => [] }, { gpuQuery: async () => null });
      expect(monitor).toHaveBeenCalledWith({ resolution: EVENT_LOOP_SAMPLE_MS });
      expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100);
      expect((await server.scrape()).split('\n').filter((line) => line.startsWith('nodejs_eventloop_lag_p99_seconds '))).toHaveLength(1);
    } finally {
      monitor.mockRestore();
    }
  });

  it('labels each instance with where it runs and its execution provider', async () => {
    const instances = [
      { model: 'mlp', version: '1', instance: 'mlp_0_0', kind: 'gpu' as const, device: 0, provider: 'webgpu' },
      { model: 'mlp', version: '1', instance: 'mlp_1_0', kind: 'cpu' as const, device: -1, provider: 'cpu' },
    ];
    server = createMetricsServer({ statsSnapshots: () => [], instanceSnapshots: () => instances }, { gpuQuery: async () => null });
    const text = await server.scrape();
    expect(value(text, 'tessera_model_instance_info{model="mlp",version="1",instance="mlp_0_0",kind="gpu",device="0",provider="webgpu"}')).toBe(1);
    expect(value(text, 'tessera_model_instance_info{model="mlp",version="1",instance="mlp_1_0",kind="cpu",device="-1",provider="cpu"}')).toBe(1);
    instances.pop();
    expect(await server.scrape()).not.toContain('instance="mlp_1_0"');
  });

  it('serves Triton per-model families with values equal to the stats source', async () => {
    snapshots = [snapshot('resnet', '1', 1), snapshot('bert', '3', 2)];
    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0.0.4/);
    const r = 'model="resnet",version="1"';
    const b = 'model="bert",version="3"';
    expect(text).toContain('# TYPE nv_inference_request_success counter');
    expect(text).toContain('# TYPE nv_inference_pending_request_count gauge');
    expect(value(text, `nv_inference_request_success{${r}}`)).toBe(10);
    expect(value(text, `nv_inference_request_success{${b}}`)).toBe(20);
    expect(value(text, `nv_inference_request_failure{${b},reason="BACKEND"}`)).toBe(6);
    expect(value(text, `nv_inference_request_failure{${r},reason="OTHER"}`)).toBe(0);
    expect(value(text, `nv_inference_count{${b}}`)).toBe(80);
    expect(value(text, `nv_inference_exec_count{${r}}`)).toBe(5);
    expect(value(text, `nv_inference_pending_request_count{${b}}`)).toBe(14);
    expect(value(text, `nv_inference_request_duration_us{${r}}`)).toBe(1000);
    expect(value(text, `nv_inference_queue_duration_us{${r}}`)).toBe(200);
    expect(value(text, `nv_inference_compute_input_duration_us{${r}}`)).toBe(30);
    expect(value(text, `nv_inference_compute_infer_duration_us{${b}}`)).toBe(1200);
    expect(value(text, `nv_inference_compute_output_duration_us{${r}}`)).toBe(20);
    expect(value(text, `nv_cache_num_hits_per_model{${r}}`)).toBe(0);
    expect(text).not.toContain('nv_gpu_');
  });

  it('follows the source between scrapes and drops unloaded versions', async () => {
    snapshots = [snapshot('resnet', '1', 1)];
    const first = await scrape({}, '/metrics/');
    expect(value(first.text, 'nv_inference_count{model="resnet",version="1"}')).toBe(40);
    snapshots = [snapshot('resnet', '2', 3)];
    const text = await (await fetch(`http://127.0.0.1:${first.port}/metrics`)).text();
    expect(value(text, 'nv_inference_count{model="resnet",version="2"}')).toBe(120);
    expect(text).not.toContain('version="1"');
  });

  it('serves tessera_inference_batch_size as a cumulative histogram of the snapshot batch sizes', async () => {
    snapshots = [snapshot('resnet', '1', 1), snapshot('bert', '3', 2)];
    const { text } = await scrape();
    const b = 'model="bert",version="3"';
    expect(text).toContain('# TYPE tessera_inference_batch_size histogram');
    const bucket = (le: string) => value(text, `tessera_inference_batch_size_bucket{${b},le="${le}"}`);
    expect([1, 2, 4, 8, 16, 32, 64, 128].map((le) => bucket(String(le)))).toEqual([2, 2, 2, 8, 8, 8, 8, 10]);
    expect(bucket('+Inf')).toBe(10);
    expect(value(text, `tessera_inference_batch_size_count{${b}}`)).toBe(10);
    expect(value(text, `tessera_inference_batch_size_sum{${b}}`)).toBe(2 * 1 + 6 * 8 + 2 * 100);
    expect(value(text, 'tessera_inference_batch_size_count{model="resnet",version="1"}')).toBe(5);
    // The JSON view (registry.getMetricsAsJSON) serves the same values.
    const json = await server!.registry.getMetricsAsJSON();
    const family = json.find((m) => m.name === 'tessera_inference_batch_size');
    expect(family?.values.filter((v) => v.labels['le'] === '+Inf').map((v) => v.value)).toEqual([5, 10]);
    snapshots = [];
    expect(await server!.scrape()).not.toContain('tessera_inference_batch_size_bucket{');
  });

  it("serves Triton's nv_inference_first_response_histogram_ms with its default buckets", async () => {
    snapshots = [snapshot('llm', '1', 2)];
    const { text } = await scrape();
    const l = 'model="llm",version="1"';
    expect(text).toContain('# TYPE nv_inference_first_response_histogram_ms histogram');
    const bucket = (le: string) => value(text, `nv_inference_first_response_histogram_ms_bucket{${l},le="${le}"}`);
    expect(['100', '500', '2000', '5000', '+Inf'].map(bucket)).toEqual([2, 2, 3, 3, 3]);
    expect(value(text, `nv_inference_first_response_histogram_ms_count{${l}}`)).toBe(3);
    expect(value(text, `nv_inference_first_response_histogram_ms_sum{${l}}`)).toBe(800);
  });

  it('serves CPU, memory and process families', async () => {
    snapshots = [];
    const { text } = await scrape();
    const util = value(text, 'nv_cpu_utilization');
    expect(util).toBeGreaterThanOrEqual(0);
    expect(util).toBeLessThanOrEqual(1);
    const total = value(text, 'nv_cpu_memory_total_bytes') ?? 0;
    const used = value(text, 'nv_cpu_memory_used_bytes') ?? -1;
    expect(total).toBeGreaterThan(0);
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(total);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('serves GPU families from nvidia-smi output, sampling at most once per interval', async () => {
    let runs = 0;
    const gpuQuery = async () => {
      runs++;
      return SMI_SAMPLE;
    };
    const { text, port } = await scrape({ gpuQuery, intervalMs: 60_000 });
    const g = 'gpu_uuid="GPU-11111111-2222-3333-4444-555555555555"';
    expect(value(text, `nv_gpu_utilization{${g}}`)).toBeCloseTo(0.37);
    expect(value(text, `nv_gpu_memory_total_bytes{${g}}`)).toBe(81559 * 1024 * 1024);
    expect(value(text, `nv_gpu_memory_used_bytes{${g}}`)).toBe(1024 * 1024 * 1024);
    expect(value(text, `nv_gpu_power_usage{${g}}`)).toBeCloseTo(71.52);
    expect(value(text, `nv_gpu_power_limit{${g}}`)).toBe(700);
    expect(text).not.toMatch(/nv_gpu_power_usage\{gpu_uuid="GPU-aaaa/);
    await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(runs).toBe(1);
  });

  it('answers 404 elsewhere and 405 to other methods', async () => {
    const { status, port } = await scrape({}, '/v2/health/ready');
    expect(status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('parsers', () => {
  it('parses nvidia-smi query output, treating [N/A] as absent', () => {
    const [a, b] = parseNvidiaSmiQuery(SMI_SAMPLE);
    expect(a).toEqual({
      uuid: 'GPU-11111111-2222-3333-4444-555555555555',
      utilization: 0.37,
      memoryTotalBytes: 81559 * 1024 * 1024,
      memoryUsedBytes: 1024 * 1024 * 1024,
      powerWatts: 71.52,
      powerLimitWatts: 700,
    });
    expect(b).toEqual({ uuid: 'GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', utilization: 0, memoryTotalBytes: 81559 * 1024 * 1024, memoryUsedBytes: 4 * 1024 * 1024 });
    expect(parseNvidiaSmiQuery('No devices were found\n')).toEqual([]);
  });

  it('parses /proc/meminfo', () => {
    const text = 'MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\n';
    expect(parseMeminfo(text)).toEqual({ totalBytes: 16000000 * 1024, usedBytes: 10000000 * 1024 });
    expect(parseMeminfo('garbage')).toBeNull();
  });
});
