import { describe, expect, it } from 'vitest';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import type { FloodPoint, OpenPoint, TierFigures, TierLoadResult } from './gateway-phases.js';
import { classifyFailure } from './gateway-phases.js';
import { evaluateTargets, toGatewayCsv, type GatewayFigures } from './gateway-report.js';

const lat = (...ms: number[]) => summarizeLatencies(ms.map((m) => m * 1000));
const open = (p50Ms: number, p99Ms: number): OpenPoint => ({ ratePerSec: 100, completedPerSec: 100, latency: lat(p50Ms, p99Ms), errors: 0, dropped: 0 });
const flood = (rps: number): FloodPoint => ({
  threads: 2, connections: 32, completed: rps, errors: 0, mismatched: 0, mismatchedValues: {}, windowS: 1, requestsPerSec: rps, latency: lat(1),
  serverCpuUsPerRequest: 1e6 / rps,
});
const tier = (name: TierFigures['tier'], goodput: number, p99Ms: number, rejectedMs: number[] = []): TierFigures => ({
  tier: name, offeredPerSec: 100, sentPerSec: 100, completedPerSec: 100, goodputPerSec: goodput, latency: lat(p99Ms), rejected: lat(...rejectedMs),
  failures: { rejected: rejectedMs.length, expired: 0, evicted: 0, timeout: 0, other: 0 },
});
const load = (tiers: TierFigures[], rejectedMs: number[] = []): TierLoadResult => ({
  totalRatePerSec: 100 * tiers.length, windowS: 1, dropped: 0, tiers, rejectedAll: lat(...rejectedMs), gatewayRejections: {},
});

function figures(overrides: Partial<GatewayFigures> = {}): GatewayFigures {
  return {
    addedLatency: { ratePerSec: 200, direct: open(1, 2), gateway: open(1.3, 3.5), addedP50Us: 300, addedP99Us: 1500 },
    cache: { threads: 2, connectionsPerThread: 32, bareHono: flood(20_000), nodeHttpReplay: flood(16_000), cacheHit: flood(12_000), ratio: 0.6 },
    overload: {
      model: 'steady', nominalCapacityPerSec: 400, capacityPerSec: 390, capacityCallers: 32, capacityErrors: 0, serviceMs: 20,
      premiumAlone: load([tier('premium', 100, 30)]),
      overload: load([tier('premium', 97, 60), tier('standard', 60, 1900, [1, 2]), tier('free', 5, 400, [1, 3])], [1, 2, 1, 3]),
    },
    routing: {
      model: 'work', nominalCapacityPerSec: 333, loadFactor: 0.6, ratePerSec: 200,
      points: [
        { policy: 'p2c', ...open(21, 60), perNode: {} },
        { policy: 'round-robin', ...open(22, 130), perNode: {} },
      ],
    },
    premiumQueueTimeoutMs: 5000,
    ...overrides,
  };
}

describe('evaluateTargets', () => {
  it('passes every target on good figures', () => {
    const targets = evaluateTargets(figures());
    expect(targets.map((t) => t.verdict)).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(targets[3]?.value).toBeCloseTo(0.97);
    expect(targets[4]?.bound).toBe(5040);
    expect(targets[6]?.value).toBeCloseTo(60 / 130);
  });

  it('misses what is over its bound and marks what was not measured N/A', () => {
    const base = figures();
    const targets = evaluateTargets(
      figures({
        addedLatency: { ...base.addedLatency, addedP50Us: 500 },
        overload: { ...base.overload, overload: load([tier('premium', 90, 60)]) },
      }),
    );
    expect(targets[0]?.verdict).toBe('MISS'); // strictly under 0.5 ms
    expect(targets[3]?.verdict).toBe('MISS'); // 90 / 100 < 0.95
    expect(targets[5]?.verdict).toBe('N/A'); // no rejection measured
  });
});

describe('toGatewayCsv', () => {
  it('writes one row per series under a fixed header', () => {
    const lines = toGatewayCsv(figures()).trimEnd().split('\n');
    expect(lines[0]).toBe('phase,series,offered_per_s,throughput_per_s,p50_ms,p90_ms,p99_ms,max_ms,errors,server_cpu_us_per_req,note');
    // 2 latency + 3 cache + 1 alone + 3 overload + 2 routing
    expect(lines).toHaveLength(12);
    expect(lines.filter((l) => l.startsWith('cache,')).map((l) => l.split(',')[1])).toEqual(['bare hono GET /', 'node:http replay', 'gateway cache hit']);
    expect(lines[1]).toMatch(/^latency,direct to node,200\.0,100\.0,/);
  });
});

describe('classifyFailure', () => {
  const err = (code: string, message: string) => Object.assign(new Error(message), { code });
  it('tells refusals at the door from queue expiry, eviction and upstream timeouts', () => {
    expect(classifyFailure(err('UNAVAILABLE', "tier 'free' already holds its share (51) of the queue"))).toBe('rejected');
    expect(classifyFailure(err('UNAVAILABLE', "the request waited in the queue of model 'steady@1' until its deadline"))).toBe('expired');
    expect(classifyFailure(err('UNAVAILABLE', "evicted from the queue of model 'steady@1' by a higher-priority request"))).toBe('evicted');
    expect(classifyFailure(err('DEADLINE_EXCEEDED', "the request deadline passed before node 'n1' answered"))).toBe('timeout');
    expect(classifyFailure(new Error('socket hang up'))).toBe('other');
  });
});
