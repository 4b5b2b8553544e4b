/**
 * Plots for the two scenarios that write their own JSON (batching, gateway), drawn from that JSON so
 * `npm run bench -- report` can draw them for any results folder, including one from an older run:
 *
 * - batching-throughput: served inferences/s against concurrency, batched and unbatched, per protocol,
 *   with the raw-onnxruntime ceiling at batch 64 as a dashed bound;
 * - batching-p99: p99 latency against concurrency, same series, with the p99 bound of the targets;
 * - gateway-added-latency: the latency profile (p50 … p99) straight to a node and through the gateway;
 * - gateway-overload: each tier's latency profile under overload, beside premium alone;
 * - gateway-routing: the latency profile of power-of-two-choices and round robin on uneven nodes.
 *
 * A figure the JSON lacks (an older format, an interrupted run) is skipped rather than drawn as zero.
 */
import type { ChartPoint, ChartSeries, LineChart } from '../lib/charts/svg-chart.js';

type Json = Record<string, unknown>;

const PERCENTILES = [
  { key: 'p50Us', at: 50 },
  { key: 'p90Us', at: 90 },
  { key: 'p95Us', at: 95 },
  { key: 'p99Us', at: 99 },
] as const;

function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record).filter((v): v is Json => v !== undefined) : [];
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : Number.NaN;
}

/** A latency summary (microseconds) as points x = percentile, y = milliseconds. */
function profile(latency: unknown): ChartPoint[] {
  const l = record(latency);
  if (l === undefined) return [];
  return PERCENTILES.map(({ key, at }) => ({ x: at, y: num(l[key]) / 1000 }));
}

function hasPoints(series: readonly ChartSeries[]): boolean {
  return series.some((s) => s.points.some((p) => Number.isFinite(p.x) && Number.isFinite(p.y)));
}

function keepDrawable(charts: Record<string, LineChart>): Record<string, LineChart> {
  return Object.fromEntries(Object.entries(charts).filter(([, chart]) => hasPoints(chart.series.filter((s) => s.reference !== true))));
}

export function batchingCharts(json: Json): Record<string, LineChart> {
  const points = list(json.points).filter((p) => p.model === 'mlp_large');
  const protocols = [...new Set(points.map((p) => String(p.protocol)))].sort();
  const setups = [...new Set(points.map((p) => String(p.setup)))].sort();
  const concurrencies = [...new Set(points.map((p) => num(p.concurrency)))].filter(Number.isFinite).sort((a, b) => a - b);
  const span = (y: number): ChartPoint[] => (concurrencies.length > 0 && Number.isFinite(y) ? [concurrencies[0] as number, concurrencies.at(-1) as number].map((x) => ({ x, y })) : []);
  const measured = (y: (p: Json) => number): ChartSeries[] =>
    protocols.flatMap((protocol) =>
      setups.map((setup) => ({
        name: `${protocol} ${setup}`,
        points: points
          .filter((p) => p.protocol === protocol && p.setup === setup)
          .map((p) => ({ x: num(p.concurrency), y: y(p) }))
          .sort((a, b) => a.x - b.x),
      })),
    );
  const ceilingAt64 = list(record(json.ceiling)?.points).find((p) => p.batchSize === 64);
  const p99Bounds = list(json.targets).filter((t) => String(t.name).startsWith('p99'));
  return keepDrawable({
    'batching-throughput': {
      title: 'mlp_large: served inferences/s vs concurrency',
      xLabel: 'concurrency',
      yLabel: 'inferences/s',
      yFromZero: true,
      series: [
        ...measured((p) => num(p.inferencesPerSec)),
        { name: 'ceiling (onnxruntime, batch 64)', points: span(num(ceilingAt64?.inferencesPerSec)), reference: true },
      ],
    },
    'batching-p99': {
      title: 'mlp_large: p99 latency vs concurrency',
      xLabel: 'concurrency',
      yLabel: 'p99 latency (ms)',
      yFromZero: true,
      series: [
        ...measured((p) => num(record(p.latency)?.p99Us) / 1000),
        ...p99Bounds.map((t) => ({ name: `${String(t.protocol)} p99 bound at c=64`, points: span(num(t.threshold)), reference: true })),
      ],
    },
  });
}

export function gatewayCharts(json: Json): Record<string, LineChart> {
  const figures = record(json.figures) ?? {};
  const added = record(figures.addedLatency);
  const overload = record(figures.overload);
  const routing = record(figures.routing);
  const percentileAxis = { xLabel: 'percentile', yLabel: 'latency (ms)', yFromZero: true } as const;
  const tierSeries = (phase: unknown, suffix: string): ChartSeries[] =>
    list(record(phase)?.tiers).map((t) => ({ name: `${String(t.tier)}${suffix}`, points: profile(t.latency) }));
  return keepDrawable({
    'gateway-added-latency': {
      title: `Added latency at ${num(added?.ratePerSec).toFixed(0)} req/s (open loop)`,
      ...percentileAxis,
      series: [
        { name: 'direct to the node', points: profile(record(added?.direct)?.latency) },
        { name: 'through the gateway', points: profile(record(added?.gateway)?.latency) },
      ],
    },
    'gateway-overload': {
      title: `Latency per tier: premium alone, then all tiers at ${(num(record(overload?.overload)?.totalRatePerSec) / num(overload?.capacityPerSec)).toFixed(1)}x capacity`,
      ...percentileAxis,
      series: [...tierSeries(overload?.premiumAlone, ' alone'), ...tierSeries(overload?.overload, ' under overload')],
    },
    'gateway-routing': {
      title: `Routing on uneven nodes at ${num(routing?.ratePerSec).toFixed(0)} req/s`,
      ...percentileAxis,
      series: list(routing?.points).map((p) => ({ name: String(p.policy), points: profile(p.latency) })),
    },
  });
}

/** The charts for one scenario's JSON, by scenario name; none for a scenario that draws its own. */
export function resultCharts(scenario: string, json: Json): Record<string, LineChart> {
  if (scenario === 'batching') return batchingCharts(json);
  if (scenario === 'gateway') return gatewayCharts(json);
  return {};
}
