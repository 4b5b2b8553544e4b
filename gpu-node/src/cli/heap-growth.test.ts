import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { heapGrowingFlagGiven } from './heap-growth.js';

const HEAP_GROWTH = fileURLToPath(new URL('./heap-growth.ts', import.meta.url));

/**
 * A child node with `--trace-gc` that keeps a live base and churns objects that live long enough to be promoted
 * (the node's pattern under a wave), after applyHeapGrowingPercent(PERCENT): its mark-compacts, counted.
 */
function markCompacts(percent: number): number {
  const script = `
    const { applyHeapGrowingPercent } = await import(${JSON.stringify(HEAP_GROWTH)});
    applyHeapGrowingPercent(${percent}, [], '');
    const base = Array.from({ length: 300000 }, (_, i) => ({ i, s: 'x' + i }));
    const ring = new Array(200000);
    for (let i = 0; i < 12000000; i++) ring[i % ring.length] = { i, a: [i, i + 1, i + 2] };
    globalThis.kept = base;
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--trace-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').filter((line) => line.includes('Mark-Compact')).length;
}

describe('the main isolate heap growing factor', () => {
  it('set after start, reaches V8: the same churn runs fewer mark-compacts', () => {
    const own = markCompacts(0);
    const wide = markCompacts(1000);
    expect(own).toBeGreaterThan(0);
    // V8 adapts its own factor to the GC and mutator speeds, so the counts move from run to run: a margin.
    expect(wide).toBeLessThan(own * 0.7);
  }, 60_000);

  it("leaves a --heap-growing-percent given to node itself (command line or NODE_OPTIONS) standing", () => {
    expect(heapGrowingFlagGiven([], undefined)).toBe(false);
    expect(heapGrowingFlagGiven(['--heap-growing-percent=50'], undefined)).toBe(true);
    expect(heapGrowingFlagGiven(['--heap_growing_percent', '50'], undefined)).toBe(true);
    expect(heapGrowingFlagGiven([], '--max-old-space-size=512 --heap-growing-percent=20')).toBe(true);
    expect(heapGrowingFlagGiven(['--heap-growing-percentage=5'], '--max-semi-space-size=16')).toBe(false);
  });
});
