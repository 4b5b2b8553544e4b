/**
 * The console form of a sweep: one row per point (client latencies, the server's breakdown from the
 * statistics API, batch size, errors and drops, stability), and a per-tier table when requests went
 * out under more than one API key or a latency SLO was given. Also the JSON document written by
 * --json-out, which holds every figure (per window too) but never the API keys themselves.
 */
import { formatTable } from '../lib/output/text-table.js';
import type { PerfPoint } from './measure-point.js';
import type { PerfOptions } from './perf-options.js';

const ms = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(2) : '-');
const num = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export const loadLabel = (p: PerfPoint): string => (p.mode === 'rate' ? `${num(p.requestRate ?? Number.NaN, 1)}/s` : String(p.concurrency));

export function pointsTable(points: readonly PerfPoint[]): string {
  const mode = points[0]?.mode ?? 'concurrency';
  const headers = [
    mode === 'rate' ? 'rate' : 'conc',
    'inf/s',
    'p50 ms',
    'p90 ms',
    'p95 ms',
    'p99 ms',
    'avg ms',
    'queue ms',
    'infer ms',
    'batch',
    'errors',
    ...(mode === 'rate' ? ['dropped'] : []),
    'stable',
  ];
  const rows = points.map((p) => [
    loadLabel(p),
    num(p.inferencesPerSec),
    ms(p.latency.p50Us),
    ms(p.latency.p90Us),
    ms(p.latency.p95Us),
    ms(p.latency.p99Us),
    ms(p.latency.avgUs),
    ms(p.server.queueUs),
    ms(p.server.computeInferUs),
    num(p.server.avgBatchSize, 2),
    String(p.errors),
    ...(mode === 'rate' ? [String(p.dropped)] : []),
    `${p.stable ? 'yes' : 'NO'} (${p.trials})`,
  ]);
  return formatTable(headers, rows);
}

export function tiersTable(points: readonly PerfPoint[], sloMs: number | undefined): string {
  const rows = points.flatMap((p) =>
    p.tiers.map((t) => [loadLabel(p), t.tier, num(t.requestsPerSec), num(t.goodputPerSec), ms(t.latency.p99Us), String(t.errors)]),
  );
  const goodput = sloMs === undefined ? 'goodput/s' : `goodput/s (<=${sloMs} ms)`;
  return formatTable([points[0]?.mode === 'rate' ? 'rate' : 'conc', 'tier', 'ok/s', goodput, 'p99 ms', 'errors'], rows);
}

/** The options as they go into the JSON: keys replaced by their tier labels. */
export function redactedOptions(options: PerfOptions): Record<string, unknown> {
  return { ...options, apiKeys: options.apiKeys.map((k) => ({ tier: k.tier, key: '<redacted>' })) };
}

export function perfJson(options: PerfOptions, extra: Record<string, unknown>, points: readonly PerfPoint[]): unknown {
  return {
    tool: 'tessera-perf',
    options: redactedOptions(options),
    ...extra,
    notes: [
      options.sweep.mode === 'rate'
        ? 'Open loop: latency is measured from each request\'s intended send time (coordinated-omission safe).'
        : 'Closed loop: latency is measured from each request\'s actual send time.',
      'Each point merges its last three measurement windows; server figures are statistics-API deltas over those windows, averaged per request (µs). null = not measured.',
    ],
    points,
  };
}
