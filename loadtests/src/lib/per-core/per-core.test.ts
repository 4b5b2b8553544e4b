import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { parseThreadStat, perUnit, pinnedCommand, perCoreSupport, readThreadCpu, threadCpuDelta } from './index.js';

describe('per-core measurement', () => {
  it('reads a thread name with spaces and parentheses and its user + system ticks', () => {
    // Fields after the name: state(3) ... utime(14)=250 stime(15)=50.
    const stat = '42 (we (ird) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0';
    expect(parseThreadStat(42, stat)).toEqual({ tid: 42, name: 'we (ird) name', cpuSeconds: 3 });
  });

  it('splits CPU into the event loop, named threads and helpers, and divides per unit', () => {
    const before = [
      { tid: 10, name: 'node', cpuSeconds: 1 },
      { tid: 11, name: 'node', cpuSeconds: 2 },
      { tid: 12, name: 'node', cpuSeconds: 0 },
    ];
    const after = [
      { tid: 10, name: 'node', cpuSeconds: 1.5 },
      { tid: 11, name: 'node', cpuSeconds: 3 },
      { tid: 12, name: 'node', cpuSeconds: 0.25 },
      { tid: 13, name: 'node', cpuSeconds: 0.25 }, // born in between: counts whole
    ];
    const split = threadCpuDelta(before, after, 10, new Map([[11, 'onnxruntime']]));
    expect(split.eventLoopUs).toBeCloseTo(500_000);
    expect(split.onnxruntimeUs).toBeCloseTo(1_000_000);
    expect(split.helpersUs).toBeCloseTo(500_000);
    expect(split.totalUs).toBeCloseTo(2_000_000);
    expect(perUnit(split, 1000).eventLoopUs).toBeCloseTo(500);
    expect(Number.isNaN(perUnit(split, 0).totalUs)).toBe(true);
  });

  it('measures a real busy process on its main thread', async () => {
    const [command, args] = pinnedCommand(1, process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end); setTimeout(() => {}, 5000)']);
    const child = spawn(command, args, { stdio: 'ignore' });
    try {
      const before = await readThreadCpu(child.pid!);
      await new Promise((resolve) => setTimeout(resolve, 700));
      const after = await readThreadCpu(child.pid!);
      if (before.length === 0) return expect(process.platform).not.toBe('linux');
      const split = threadCpuDelta(before, after, child.pid!);
      // The busy loop runs on the main thread; under taskset the pid stays the child's (taskset execs node).
      expect(split.eventLoopUs).toBeGreaterThan(split.helpersUs);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });

  it('says why per-core figures are impossible, or that they are possible', () => {
    const support = perCoreSupport();
    if (support.ok) expect(pinnedCommand(0, 'x', ['y'])).toEqual(['taskset', ['-c', '0', 'x', 'y']]);
    else expect(support.why).toMatch(/per-core/);
  });
});
