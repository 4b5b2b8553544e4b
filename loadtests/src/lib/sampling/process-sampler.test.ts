import { describe, expect, it } from 'vitest';
import { parsePromText } from './prom-text.js';
import { processFigures, slope, summarizeSeries, type ProcessSample } from './process-sampler.js';

const MIB = 2 ** 20;

describe('processFigures', () => {
  it('reads prom-client default metrics, with or without a prefix', () => {
    const text = [
      '# HELP tessera_gateway_process_resident_memory_bytes Resident memory size in bytes.',
      `tessera_gateway_process_resident_memory_bytes ${100 * MIB}`,
      `tessera_gateway_nodejs_heap_size_used_bytes ${20 * MIB}`,
      'tessera_gateway_nodejs_eventloop_lag_p99_seconds 0.012',
      'tessera_gateway_nodejs_eventloop_lag_seconds 0.001',
    ].join('\n');
    expect(processFigures(parsePromText(text), 'tessera_gateway_')).toEqual({ rssBytes: 100 * MIB, heapUsedBytes: 20 * MIB, lagP99Ms: 12, lagMs: 1 });
    expect(processFigures(parsePromText(text), '').rssBytes).toBeNaN();
  });
});

describe('summarizeSeries', () => {
  it('takes the RSS slope over the second half only, and skips failed scrapes', () => {
    // Grows 10 MiB/min during the first minute (warm-up), flat afterwards.
    const samples: ProcessSample[] = [];
    for (let s = 0; s <= 120; s += 10) {
      const mib = 100 + Math.min(s, 60) / 6;
      samples.push({ tMs: s * 1000, rssBytes: mib * MIB, heapUsedBytes: 10 * MIB, lagP99Ms: s === 50 ? 40 : 11, lagMs: 0 });
    }
    samples.push({ tMs: 125_000, rssBytes: Number.NaN, heapUsedBytes: Number.NaN, lagP99Ms: Number.NaN, lagMs: Number.NaN });
    const summary = summarizeSeries(samples);
    expect(summary.samples).toBe(14);
    expect(summary.failedScrapes).toBe(1);
    expect(summary.rssStartMiB).toBe(100);
    expect(summary.rssEndMiB).toBe(110);
    expect(summary.rssSlopeMiBPerMin).toBeCloseTo(0, 6);
    expect(summary.lagP99MaxMs).toBe(40);
    expect(summary.lagP99MedianMs).toBe(11);
  });

  it('slope is a least-squares fit', () => {
    expect(slope([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }])).toBeCloseTo(2);
    expect(slope([{ x: 0, y: 1 }])).toBeNaN();
  });
});
