import { describe, expect, it } from 'vitest';
import { batchingCharts, gatewayCharts, resultCharts } from './result-charts.js';

const latency = (p50: number, p99: number): Record<string, number> => ({ p50Us: p50 * 1000, p90Us: p50 * 1500, p95Us: p99 * 800, p99Us: p99 * 1000 });

describe('result charts', () => {
  it('plots batching throughput and p99 per protocol and setup, with the ceiling and bound as references', () => {
    const json = {
      ceiling: { points: [{ batchSize: 1, inferencesPerSec: 500 }, { batchSize: 64, inferencesPerSec: 6000 }] },
      points: [
        { model: 'mlp_large', protocol: 'http', setup: 'batched', concurrency: 64, inferencesPerSec: 3000, latency: latency(30, 42) },
        { model: 'mlp_large', protocol: 'http', setup: 'batched', concurrency: 1, inferencesPerSec: 40, latency: latency(25, 34) },
        { model: 'mlp_large', protocol: 'http', setup: 'unbatched', concurrency: 1, inferencesPerSec: 320, latency: latency(3, 6) },
        { model: 'simple', protocol: 'http', setup: 'default', concurrency: 16, inferencesPerSec: 6000, latency: latency(1, 7) },
      ],
      targets: [{ protocol: 'http', name: 'p99 <= delay + 2 x batch exec', threshold: 48 }],
    };
    const charts = batchingCharts(json);
    const throughput = charts['batching-throughput'];
    expect(throughput?.series.map((s) => s.name)).toEqual(['http batched', 'http unbatched', 'ceiling (onnxruntime, batch 64)']);
    expect(throughput?.series[0]?.points).toEqual([{ x: 1, y: 40 }, { x: 64, y: 3000 }]);
    expect(throughput?.series[2]).toMatchObject({ reference: true, points: [{ x: 1, y: 6000 }, { x: 64, y: 6000 }] });
    const p99 = charts['batching-p99'];
    expect(p99?.series[0]?.points).toEqual([{ x: 1, y: 34 }, { x: 64, y: 42 }]);
    expect(p99?.series.at(-1)).toMatchObject({ name: 'http p99 bound at c=64', reference: true, points: [{ x: 1, y: 48 }, { x: 64, y: 48 }] });
  });

  it('plots gateway latency profiles and leaves out a phase the JSON lacks', () => {
    const json = {
      figures: {
        addedLatency: { ratePerSec: 200, direct: { latency: latency(1.2, 5.6) }, gateway: { latency: latency(2.6, 16) } },
        routing: { ratePerSec: 200, points: [{ policy: 'p2c', latency: latency(23, 110) }, { policy: 'round-robin', latency: latency(24, 122) }] },
      },
    };
    const charts = gatewayCharts(json);
    expect(Object.keys(charts).sort()).toEqual(['gateway-added-latency', 'gateway-routing']);
    expect(charts['gateway-added-latency']?.series[1]?.points).toEqual([
      { x: 50, y: 2.6 },
      { x: 90, y: 3.9 },
      { x: 95, y: 12.8 },
      { x: 99, y: 16 },
    ]);
    expect(charts['gateway-routing']?.series.map((s) => s.name)).toEqual(['p2c', 'round-robin']);
  });

  it('draws nothing for a scenario that writes its own plots, or for empty JSON', () => {
    expect(resultCharts('soak', { figures: {} })).toEqual({});
    expect(resultCharts('batching', {})).toEqual({});
    expect(resultCharts('gateway', {})).toEqual({});
  });
});
