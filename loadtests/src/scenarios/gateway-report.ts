/**
 * The gateway bench's verdicts and its outputs: the targets of the gateway issue evaluated on the
 * measured figures (PASS / MISS, or N/A when the figure could not be measured), a flat CSV with one
 * row per measured series, and the terminal table. Pure, so the target arithmetic is unit-tested.
 */
import type { LatencySummary } from '../lib/sampling/percentiles.js';
import { formatTable } from '../lib/output/text-table.js';
import type { AddedLatencyResult, CacheThroughputResult, OverloadResult, RoutingResult } from './gateway-phases.js';
// The targets have the suite's shape and verdict rule (scenario-output.ts), as every scenario's.
import { atLeast, atMost, target, type Target } from './scenario-output.js';

export interface GatewayFigures {
  readonly addedLatency: AddedLatencyResult;
  readonly cache: CacheThroughputResult;
  readonly overload: OverloadResult;
  readonly routing: RoutingResult;
  /** The premium tier's queue timeout, ms (the gateway's default tiers). */
  readonly premiumQueueTimeoutMs: number;
}

const ms = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(2) : '-');
const rate = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');

export function evaluateTargets(f: GatewayFigures): Target[] {
  const { addedLatency: a, cache: c, overload: o, routing: r } = f;
  const premiumAlone = o.premiumAlone.tiers.find((t) => t.tier === 'premium');
  const premiumOver = o.overload.tiers.find((t) => t.tier === 'premium');
  const keep = premiumAlone !== undefined && premiumOver !== undefined ? premiumOver.goodputPerSec / premiumAlone.goodputPerSec : Number.NaN;
  const p99Bound = f.premiumQueueTimeoutMs + 2 * o.serviceMs;
  const rejections = o.overload.rejectedAll;
  const p2c = r.points.find((p) => p.policy === 'p2c');
  const rr = r.points.find((p) => p.policy === 'round-robin');
  const routingRatio = p2c !== undefined && rr !== undefined ? p2c.latency.p99Us / rr.latency.p99Us : Number.NaN;
  return [
    target('added p50 < 0.5 ms', a.addedP50Us / 1000, 0.5, 'ms', (v, b) => v < b,
      `gateway ${ms(a.gateway.latency.p50Us)} - direct ${ms(a.direct.latency.p50Us)} ms at ${rate(a.ratePerSec)} req/s`),
    target('added p99 < 2 ms', a.addedP99Us / 1000, 2, 'ms', (v, b) => v < b,
      `gateway ${ms(a.gateway.latency.p99Us)} - direct ${ms(a.direct.latency.p99Us)} ms at ${rate(a.ratePerSec)} req/s`),
    target('cache hits >= 0.5 x bare Hono', c.ratio, 0.5, 'x', atLeast,
      `${rate(c.cacheHit.requestsPerSec)} / ${rate(c.bareHono.requestsPerSec)} req/s (${c.threads} threads x ${c.connectionsPerThread} connections)`),
    target('premium keeps >= 95% goodput at 2x', keep, 0.95, 'x', atLeast,
      premiumAlone !== undefined && premiumOver !== undefined
        ? `${rate(premiumOver.goodputPerSec)} under overload / ${rate(premiumAlone.goodputPerSec)} alone req/s (offered ${rate(premiumAlone.offeredPerSec)})`
        : 'premium not measured'),
    target('premium p99 <= queue timeout + 2 service', (premiumOver?.latency.p99Us ?? Number.NaN) / 1000, p99Bound, 'ms', atMost,
      `p99 ${ms(premiumOver?.latency.p99Us ?? Number.NaN)} ms vs ${f.premiumQueueTimeoutMs} + 2 x ${o.serviceMs} ms`),
    target('rejections answer in <= 5 ms at p99', rejections.p99Us / 1000, 5, 'ms', atMost,
      rejections.count > 0 ? `p99 over ${rejections.count} immediate 503s of all tiers` : 'no request was rejected at admission'),
    target('p2c p99 <= 0.5 x round robin p99', routingRatio, 0.5, 'x', atMost,
      `p2c ${ms(p2c?.latency.p99Us ?? Number.NaN)} / round robin ${ms(rr?.latency.p99Us ?? Number.NaN)} ms at ${rate(r.ratePerSec)} req/s`),
  ];
}

interface Row {
  readonly phase: string;
  readonly series: string;
  readonly offered: number;
  readonly throughput: number;
  readonly latency: LatencySummary;
  readonly errors: number;
  /** The server's CPU per request (µs): node or gateway in phase 1, Hono, replay server or gateway in phase 2. */
  readonly cpuUs: number;
  readonly note: string;
}

function rows(f: GatewayFigures): Row[] {
  const out: Row[] = [];
  const a = f.addedLatency;
  for (const [series, p] of [['direct to node', a.direct], ['through gateway', a.gateway]] as const) {
    out.push({
      phase: 'latency', series, offered: a.ratePerSec, throughput: p.completedPerSec, latency: p.latency, errors: p.errors,
      cpuUs: p.serverCpuUsPerRequest ?? Number.NaN, note: 'simple, HTTP, constant rate',
    });
  }
  const c = f.cache;
  const cacheSeries = [
    ['bare hono GET /', c.bareHono, 'closed loop'],
    ['node:http replay', c.nodeHttpReplay, 'closed loop; the floor: reads the POST, writes the cached answer, nothing else (no target)'],
    ['gateway cache hit', c.cacheHit, 'closed loop'],
  ] as const;
  for (const [series, p, what] of cacheSeries) {
    const other = Object.entries(p.mismatchedValues).map(([value, n]) => `${n} x-cache ${value}`);
    const note = `${what}${other.length > 0 ? `; not counted: ${other.join(', ')}` : ''}`;
    out.push({ phase: 'cache', series, offered: Number.NaN, throughput: p.requestsPerSec, latency: p.latency, errors: p.errors, cpuUs: p.serverCpuUsPerRequest, note });
  }
  const o = f.overload;
  for (const [label, load] of [['alone', o.premiumAlone], ['2x', o.overload]] as const) {
    for (const t of load.tiers) {
      const fl = t.failures;
      out.push({
        phase: 'overload',
        series: `${t.tier} ${label}`,
        offered: t.offeredPerSec,
        throughput: t.goodputPerSec,
        latency: t.latency,
        errors: fl.rejected + fl.expired + fl.evicted + fl.timeout + fl.other,
        cpuUs: Number.NaN,
        note:
          `sent ${rate(t.sentPerSec)}/s; rejected ${fl.rejected} (p99 ${ms(t.rejected.p99Us)} ms), expired ${fl.expired}, evicted ${fl.evicted}` +
          (fl.timeout + fl.other > 0 ? `, timeout ${fl.timeout}, other ${fl.other}` : ''),
      });
    }
  }
  const r = f.routing;
  for (const p of r.points) {
    out.push({
      phase: 'routing',
      series: p.policy,
      offered: r.ratePerSec,
      throughput: p.completedPerSec,
      latency: p.latency,
      errors: p.errors,
      cpuUs: Number.NaN,
      note: `per node ${Object.entries(p.perNode).map(([n, k]) => `${n.replace(/^bench-/, '')}=${k}`).join(' ')}`,
    });
  }
  return out;
}

export function toGatewayCsv(f: GatewayFigures): string {
  const header = 'phase,series,offered_per_s,throughput_per_s,p50_ms,p90_ms,p99_ms,max_ms,errors,server_cpu_us_per_req,note';
  const cell = (x: number, digits: number): string => (Number.isFinite(x) ? x.toFixed(digits) : '');
  const lines = rows(f).map((r) =>
    [
      r.phase,
      r.series,
      cell(r.offered, 1),
      cell(r.throughput, 1),
      cell(r.latency.p50Us / 1000, 3),
      cell(r.latency.p90Us / 1000, 3),
      cell(r.latency.p99Us / 1000, 3),
      cell(r.latency.maxUs / 1000, 3),
      String(r.errors),
      cell(r.cpuUs, 0),
      `"${r.note.replace(/"/g, '""')}"`,
    ].join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}

export function gatewayTable(f: GatewayFigures): string {
  return formatTable(
    ['phase', 'series', 'offered/s', 'ok/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'failed', 'cpu us/req', 'note'],
    rows(f).map((r) => [
      r.phase,
      r.series,
      rate(r.offered),
      rate(r.throughput),
      ms(r.latency.p50Us),
      ms(r.latency.p90Us),
      ms(r.latency.p99Us),
      ms(r.latency.maxUs),
      String(r.errors),
      Number.isFinite(r.cpuUs) ? r.cpuUs.toFixed(0) : '-',
      r.note,
    ]),
  );
}

export function targetLines(targets: readonly Target[]): string[] {
  return targets.map((t) => `${t.verdict.padEnd(4)}  ${t.name}: ${Number.isFinite(t.value) ? t.value.toFixed(3) : '-'} ${t.unit} (bound ${t.bound} ${t.unit}); ${t.detail}`);
}
