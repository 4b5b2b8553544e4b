/**
 * The sweep's plots, as SVG (and PNG when the machine has a converter, see svg-to-png.ts):
 * - latency-throughput: p50/p90/p99 against inferences/s, the curve that shows where latency takes off;
 * - p99-<concurrency|rate>: p99 and average latency against the swept load;
 * - batch-size: the server's average batch size against the load (dynamic batching at work);
 * - goodput-per-tier: successes (within the SLO, if any) per second for each API-key tier.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderLineChart, type LineChart } from '../lib/charts/svg-chart.js';
import { findPngConverter, svgToPng } from '../lib/charts/svg-to-png.js';
import type { PerfPoint } from './measure-point.js';

export function perfCharts(points: readonly PerfPoint[], title: string, sloMs: number | undefined): Record<string, LineChart> {
  const rate = points[0]?.mode === 'rate';
  const load = (p: PerfPoint): number => (rate ? (p.requestRate ?? Number.NaN) : p.concurrency);
  const loadName = rate ? 'request rate (req/s)' : 'concurrency';
  const msOf = (us: number): number => us / 1000;
  const tiers = points[0]?.tiers.map((t) => t.tier) ?? [];
  return {
    'latency-throughput': {
      title: `${title}: latency vs throughput`,
      xLabel: 'inferences/s',
      yLabel: 'latency (ms)',
      series: (['p50Us', 'p90Us', 'p99Us'] as const).map((key) => ({
        name: key.slice(0, 3),
        points: points.map((p) => ({ x: p.inferencesPerSec, y: msOf(p.latency[key]) })),
      })),
    },
    [rate ? 'p99-rate' : 'p99-concurrency']: {
      title: `${title}: p99 latency vs ${rate ? 'request rate' : 'concurrency'}`,
      xLabel: loadName,
      yLabel: 'latency (ms)',
      series: [
        { name: 'p99', points: points.map((p) => ({ x: load(p), y: msOf(p.latency.p99Us) })) },
        { name: 'avg', points: points.map((p) => ({ x: load(p), y: msOf(p.latency.avgUs) })) },
      ],
    },
    'batch-size': {
      title: `${title}: average batch size`,
      xLabel: loadName,
      yLabel: 'inferences per execution',
      series: [{ name: 'avg batch size', points: points.map((p) => ({ x: load(p), y: p.server.avgBatchSize })) }],
    },
    'goodput-per-tier': {
      title: `${title}: goodput per tier${sloMs !== undefined ? ` (latency <= ${sloMs} ms)` : ''}`,
      xLabel: loadName,
      yLabel: 'good requests/s',
      series: tiers.map((tier, t) => ({
        name: tier,
        points: points.map((p) => ({ x: load(p), y: p.tiers[t]?.goodputPerSec ?? Number.NaN })),
      })),
    },
  };
}

export interface WrittenPlots {
  readonly svg: string[];
  readonly png: string[];
  /** Why PNGs are missing, when they are. */
  readonly note?: string;
}

export async function writePlots(dir: string, charts: Record<string, LineChart>): Promise<WrittenPlots> {
  await mkdir(dir, { recursive: true });
  const svg: string[] = [];
  for (const [name, chart] of Object.entries(charts)) {
    const path = join(dir, `${name}.svg`);
    await writeFile(path, renderLineChart(chart));
    svg.push(path);
  }
  const converter = findPngConverter();
  if (converter === undefined) {
    return { svg, png: [], note: 'PNG skipped: neither rsvg-convert (apt-get install librsvg2-bin) nor ImageMagick convert is on PATH' };
  }
  const png: string[] = [];
  try {
    for (const path of svg) {
      const out = path.replace(/\.svg$/, '.png');
      await svgToPng(converter, path, out);
      png.push(out);
    }
  } catch (error) {
    return { svg, png, note: `PNG conversion with ${converter.name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { svg, png };
}
