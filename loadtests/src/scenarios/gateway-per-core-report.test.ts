import { describe, expect, it } from 'vitest';
import type { MeasuredPoint } from './gateway-per-core-points.js';
import { perCoreCsv, perCoreTable, perCoreTargets } from './gateway-per-core-report.js';

const point = (label: string, cpuUsPerRequest: number, p50Us?: number, p99Us?: number): MeasuredPoint => ({
  label,
  requests: 1000,
  errors: 0,
  dropped: 0,
  requestsPerSec: 1000,
  requestsPerCoreSec: 1e6 / cpuUsPerRequest,
  cpuUsPerRequest,
  mainThreadUsPerRequest: cpuUsPerRequest,
  coreShare: 0.5,
  ...(p50Us !== undefined ? { latency: { count: 1000, minUs: p50Us, avgUs: p50Us, p50Us, p90Us: p99Us ?? p50Us, p95Us: p99Us ?? p50Us, p99Us: p99Us ?? p50Us, maxUs: p99Us ?? p50Us } } : {}),
});

const figures = (hitUs: number, missUs: number, gatewayP50Us: number) => ({
  missRatePerSec: 400,
  points: [
    point('bare Hono (before)', 32),
    point('bare Hono (after)', 32),
    point('gateway cache hit (HTTP)', hitUs),
    point('nginx proxy (before)', 70),
    point('nginx proxy (after)', 74),
    point('gateway miss simple (HTTP)', missUs),
    point('gateway miss simple (gRPC)', missUs - 1),
    point('gateway miss 4 KB FP32 (HTTP)', missUs + 25),
    point('gateway hit simple (HTTP, same rate)', 60),
    point('gateway hit simple (gRPC, same rate)', 55),
    point('direct to the node (c=1)', Number.NaN, 1000, 1500),
    point('nginx proxy (c=1)', 80, 1300, 1900),
    point('gateway miss (HTTP, c=1)', missUs, gatewayP50Us, 2400),
  ],
});

describe('perCoreTargets', () => {
  it('judges each target against its anchor (anchors measured twice count as their mean)', () => {
    const met = Object.fromEntries(perCoreTargets(figures(64, 108, 1400)).map((t) => [t.name, t.met]));
    expect(met).toEqual({
      'cache hits: req/s per core >= 0.5 x bare Hono': true, // 1e6/64 = 0.5 x 1e6/32
      'CPU per miss <= 1.5 x nginx': true, // 108 <= 1.5 x 72
      "added p50 at c=1 <= nginx's + 0.1 ms": true, // +0.4 ms vs +0.3 + 0.1
      'added p99 at c=1 <= 1 ms': true, // +0.9 ms
      '4 KB FP32 <= simple + 20 us CPU': false, // +25 us
      'gRPC front door CPU <= HTTP': true,
    });
    const missed = Object.fromEntries(perCoreTargets(figures(65, 109, 1401)).map((t) => [t.name, t.met]));
    expect(missed['cache hits: req/s per core >= 0.5 x bare Hono']).toBe(false);
    expect(missed['CPU per miss <= 1.5 x nginx']).toBe(false);
    expect(missed["added p50 at c=1 <= nginx's + 0.1 ms"]).toBe(false);
  });

  it('takes the gateway\'s CPU net of idle where measured', () => {
    const f = figures(64, 108, 1400);
    const points = f.points.map((p) => (p.label === 'gateway miss simple (HTTP)' ? { ...p, netCpuUsPerRequest: 120 } : p));
    const verdict = perCoreTargets({ ...f, points }).find((t) => t.name === 'CPU per miss <= 1.5 x nginx');
    expect(verdict?.met).toBe(false);
    expect(verdict?.detail).toMatch(/^120\.0 us vs nginx 72\.0 us/);
  });

  it('names the low-rate share of a miss when the same-rate node:http anchor and the miss flood ran', () => {
    const f = figures(64, 108, 1400);
    const points = [...f.points, point('bare node:http (before)', 30), point('bare node:http (after)', 34), point('bare node:http (400 req/s)', 90), point('gateway miss flood (HTTP, no-store)', 70)];
    const verdict = perCoreTargets({ ...f, points }).find((t) => t.name === 'CPU per miss <= 1.5 x nginx');
    expect(verdict?.detail).toMatch(/bare node:http at this rate 90\.0 us vs 32\.0 us saturated; gateway miss at saturation 70\.0 us$/);
    expect(perCoreTargets(f).find((t) => t.name === 'CPU per miss <= 1.5 x nginx')?.detail).not.toMatch(/node:http/);
  });

  it('writes a row per point in the table and the CSV', () => {
    const f = figures(64, 108, 1400);
    expect(perCoreTable(f).split('\n')).toHaveLength(f.points.length + 2);
    const csv = perCoreCsv(f).trim().split('\n');
    expect(csv).toHaveLength(f.points.length + 1);
    expect(csv[1]).toBe('"bare Hono (before)",1000,31250,32,,32,0.5,,,0,0');
  });
});
