import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HistogramCells } from './histogram-cells.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const LABELS = ['route', 'model'] as const;

/** The same observations through plain observe() and through cells: the two expositions. */
async function both(observations: readonly [Record<(typeof LABELS)[number], string>, number][]) {
  const plainRegistry = new Registry();
  const plain = new Histogram({ name: 'h_seconds', help: 'help', labelNames: [...LABELS], buckets: BUCKETS, registers: [plainRegistry] });
  const cellsRegistry = new Registry();
  const cells = new HistogramCells({ name: 'h_seconds', help: 'help', labelNames: [...LABELS], buckets: BUCKETS, registry: cellsRegistry });
  for (const [labels, value] of observations) {
    plain.observe(labels, value);
    cells.cell(labels).observe(value);
  }
  return { plain: await plainRegistry.metrics(), cells: await cellsRegistry.metrics(), cellsRegistry, plainRegistry, cellsHistogram: cells, plainHistogram: plain };
}

describe('HistogramCells', () => {
  it('exposes exactly what observe() would: buckets, +Inf, sum and count per series', async () => {
    const a = { route: 'infer', model: 'simple' };
    const b = { route: 'health', model: '' };
    const { plain, cells } = await both([
      [a, 0.0005],
      [a, 0.001],
      [a, 0.05],
      [b, 0.2],
      [a, 3],
      [b, 0],
      [a, 0.0099],
    ]);
    expect(cells).toBe(plain);
    expect(cells).toContain('h_seconds_bucket{le="0.01",route="infer",model="simple"} 3');
    expect(cells).toContain('h_seconds_count{route="infer",model="simple"} 5');
  });

  it('shows no series before one is used, and a series once its cell was made', async () => {
    const { cells } = await both([]);
    expect(cells).not.toContain('h_seconds_count{');
  });

  it('refuses a non-finite value as observe() does', async () => {
    const { cellsHistogram } = await both([]);
    expect(() => cellsHistogram.cell({ route: 'x', model: 'm' }).observe(Number.NaN)).toThrow(TypeError);
  });

  it('keeps counting through a cell made before the registry was reset', async () => {
    const labels = { route: 'infer', model: 'simple' };
    const { cellsRegistry, cellsHistogram } = await both([[labels, 0.5]]);
    const cell = cellsHistogram.cell(labels);
    cellsRegistry.resetMetrics();
    cell.observe(0.05);
    const text = await cellsRegistry.metrics();
    expect(text).toContain('h_seconds_count{route="infer",model="simple"} 1');
    expect(text).toContain('h_seconds_sum{route="infer",model="simple"} 0.05');
  });
});
