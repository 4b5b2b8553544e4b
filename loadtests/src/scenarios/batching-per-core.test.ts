/** The per-core bench's arithmetic: the thread split from /proc readings and the ceiling between measured sizes. */
import { describe, expect, it } from 'vitest';
import type { CeilingResult } from '../lib/load/ort-ceiling.js';
import { benchNodeArgs, ceilingAt, splitThreads } from './batching-per-core.js';

describe('splitThreads', () => {
  it('puts the main thread in the event loop, the busiest other thread in onnxruntime and the rest in helpers', () => {
    const before = [
      { tid: 10, name: 'node', cpuSeconds: 1 },
      { tid: 11, name: 'node', cpuSeconds: 2 },
      { tid: 12, name: 'node', cpuSeconds: 0.5 },
    ];
    const after = [
      { tid: 10, name: 'node', cpuSeconds: 1.2 },
      { tid: 11, name: 'node', cpuSeconds: 2.6 },
      { tid: 12, name: 'node', cpuSeconds: 0.6 },
      { tid: 13, name: 'node', cpuSeconds: 0.05 }, // started during the window
    ];
    const split = splitThreads(before, after, 10, 1000);
    expect(split.eventLoopUs).toBeCloseTo(200);
    expect(split.onnxruntimeUs).toBeCloseTo(600);
    expect(split.helpersUs).toBeCloseTo(150);
    expect(split.totalUs).toBeCloseTo(950);
  });
});

describe('ceilingAt', () => {
  const point = (batchSize: number, inferencesPerSec: number, cpuUsPerInference: number) => ({
    batchSize,
    runs: 10,
    inferencesPerSec,
    execAvgUs: 0,
    execP50Us: 0,
    execP99Us: 0,
    cpuUsPerInference,
  });
  const ceiling: CeilingResult = { intraOpThreads: 1, points: [point(32, 2000, 500), point(64, 2400, 420)], best: point(64, 2400, 420) };

  it('interpolates between measured sizes and holds the ends outside them', () => {
    expect(ceilingAt(ceiling, 48)).toEqual({ perSec: 2200, cpuUs: 460 });
    expect(ceilingAt(ceiling, 16)).toEqual({ perSec: 2000, cpuUs: 500 });
    expect(ceilingAt(ceiling, 80)).toEqual({ perSec: 2400, cpuUs: 420 });
    expect(ceilingAt(ceiling, Number.NaN).perSec).toBeNaN();
  });
});

describe('benchNodeArgs', () => {
  it('splits BENCH_NODE_ARGS into tessera-node arguments, none when unset or blank', () => {
    expect(benchNodeArgs(' --grpc-raw-h2=true  --http-raw-reader=false ')).toEqual(['--grpc-raw-h2=true', '--http-raw-reader=false']);
    expect(benchNodeArgs(undefined)).toEqual([]);
    expect(benchNodeArgs('  ')).toEqual([]);
  });
});
