/**
 * The table and the verdicts of `npm run bench -- gateway --per-core` against issue 17's targets:
 * hit requests/s per core >= 0.5 x bare Hono's; CPU per miss <= 1.5 x nginx's per request; added
 * latency at concurrency 1 p50 <= nginx's + 0.1 ms and p99 <= 1 ms; a 4 KB FP32 tensor <= `simple` +
 * 20 us; the gRPC front door's CPU per request <= HTTP's. Anchors measured twice count as their mean;
 * the gateway's CPU per request is taken net of its idle share of the core where that was measured.
 */
import { formatTable } from '../lib/output/text-table.js';
import type { MeasuredPoint } from './gateway-per-core-points.js';

export interface PerCoreFigures {
  readonly points: readonly MeasuredPoint[];
  readonly missRatePerSec: number;
  /** The gateway's share of core 0 with no load. */
  readonly gatewayIdleShare?: number;
}

/** CPU per request for verdicts: net of idle where measured (gateway points), else all of it. */
const cpuOf = (p: MeasuredPoint): number => p.netCpuUsPerRequest ?? p.cpuUsPerRequest;

export interface PerCoreTarget {
  readonly name: string;
  readonly met: boolean;
  readonly detail: string;
}

const fmt = (n: number | undefined, digits = 1): string => (n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits));
const ms = (us: number | undefined): string => (us === undefined || !Number.isFinite(us) ? '-' : (us / 1000).toFixed(3));

export function perCoreTable(figures: PerCoreFigures): string {
  const rows = figures.points.map((p) => [
    p.label,
    fmt(p.requestsPerSec, 0),
    fmt(p.requestsPerCoreSec, 0),
    fmt(p.cpuUsPerRequest),
    fmt(p.netCpuUsPerRequest),
    fmt(p.mainThreadUsPerRequest),
    fmt(p.coreShare * 100, 0),
    ms(p.latency?.p50Us),
    ms(p.latency?.p99Us),
    `${p.errors}/${p.dropped}`,
  ]);
  return formatTable(['point', 'req/s', 'req/s per core', 'CPU us/req', 'net of idle', 'main thread us/req', 'core 0 %', 'p50 ms', 'p99 ms', 'errors/dropped'], rows);
}

export function perCoreCsv(figures: PerCoreFigures): string {
  const head = 'point,requests_per_sec,requests_per_core_sec,cpu_us_per_request,net_cpu_us_per_request,main_thread_us_per_request,core_share,p50_ms,p99_ms,errors,dropped';
  const lines = figures.points.map((p) =>
    [JSON.stringify(p.label), p.requestsPerSec, p.requestsPerCoreSec, p.cpuUsPerRequest, p.netCpuUsPerRequest ?? Number.NaN, p.mainThreadUsPerRequest, p.coreShare, (p.latency?.p50Us ?? Number.NaN) / 1000, (p.latency?.p99Us ?? Number.NaN) / 1000, p.errors, p.dropped]
      .map((v) => (typeof v === 'number' ? (Number.isFinite(v) ? String(Number(v.toFixed(3))) : '') : v))
      .join(','),
  );
  return `${[head, ...lines].join('\n')}\n`;
}

/** Points whose label starts with `prefix`, averaged (before and after). */
function mean(points: readonly MeasuredPoint[], prefix: string, pick: (p: MeasuredPoint) => number | undefined): number {
  const values = points.filter((p) => p.label.startsWith(prefix)).map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function perCoreTargets(figures: PerCoreFigures): PerCoreTarget[] {
  const p = figures.points;
  const honoPerCore = mean(p, 'bare Hono', (x) => x.requestsPerCoreSec);
  const honoCpu = mean(p, 'bare Hono', (x) => x.cpuUsPerRequest);
  const hitCpu = mean(p, 'gateway cache hit (HTTP)', cpuOf);
  const hitPerCore = 1e6 / hitCpu;
  const nginxCpu = mean(p, 'nginx proxy (before)', (x) => x.cpuUsPerRequest) / 2 + mean(p, 'nginx proxy (after)', (x) => x.cpuUsPerRequest) / 2;
  const missCpu = mean(p, 'gateway miss simple (HTTP)', cpuOf);
  // The low-rate share of a miss: a Node server doing nothing at the miss rate, and a miss at saturation.
  const nodeHttpAtRate = mean(p, 'bare node:http (', (x) => (x.label.endsWith('req/s)') ? x.cpuUsPerRequest : undefined));
  const nodeHttpSaturated = mean(p, 'bare node:http (', (x) => (x.label.endsWith('req/s)') ? undefined : x.cpuUsPerRequest));
  const missFloodCpu = mean(p, 'gateway miss flood', cpuOf);
  const lowRate = Number.isFinite(nodeHttpAtRate)
    ? `; bare node:http at this rate ${fmt(nodeHttpAtRate)} us vs ${fmt(nodeHttpSaturated)} us saturated; gateway miss at saturation ${fmt(missFloodCpu)} us`
    : '';
  const grpcMissCpu = mean(p, 'gateway miss simple (gRPC)', cpuOf);
  const fp32Cpu = mean(p, 'gateway miss 4 KB FP32', cpuOf);
  const hitRateHttp = mean(p, 'gateway hit simple (HTTP, same rate)', cpuOf);
  const hitRateGrpc = mean(p, 'gateway hit simple (gRPC, same rate)', cpuOf);
  const directP50 = mean(p, 'direct to the node', (x) => x.latency?.p50Us);
  const directP99 = mean(p, 'direct to the node', (x) => x.latency?.p99Us);
  const nginxAddedP50 = mean(p, 'nginx proxy (c=1)', (x) => x.latency?.p50Us) - directP50;
  const nginxAddedP99 = mean(p, 'nginx proxy (c=1)', (x) => x.latency?.p99Us) - directP99;
  const gwAddedP50 = mean(p, 'gateway miss (HTTP, c=1)', (x) => x.latency?.p50Us) - directP50;
  const gwAddedP99 = mean(p, 'gateway miss (HTTP, c=1)', (x) => x.latency?.p99Us) - directP99;
  return [
    { name: 'cache hits: req/s per core >= 0.5 x bare Hono', met: hitPerCore >= 0.5 * honoPerCore, detail: `${fmt(hitPerCore, 0)} vs ${fmt(honoPerCore, 0)} (x${fmt(hitPerCore / honoPerCore, 2)}); CPU per hit ${fmt(hitCpu)} us vs Hono ${fmt(honoCpu)} us` },
    { name: 'CPU per miss <= 1.5 x nginx', met: missCpu <= 1.5 * nginxCpu, detail: `${fmt(missCpu)} us vs nginx ${fmt(nginxCpu)} us (x${fmt(missCpu / nginxCpu, 2)}) at ${figures.missRatePerSec} req/s${lowRate}` },
    { name: 'added p50 at c=1 <= nginx\'s + 0.1 ms', met: gwAddedP50 <= nginxAddedP50 + 100, detail: `gateway +${ms(gwAddedP50)} ms, nginx +${ms(nginxAddedP50)} ms` },
    { name: 'added p99 at c=1 <= 1 ms', met: gwAddedP99 <= 1000, detail: `gateway +${ms(gwAddedP99)} ms (nginx +${ms(nginxAddedP99)} ms)` },
    { name: '4 KB FP32 <= simple + 20 us CPU', met: fp32Cpu <= missCpu + 20, detail: `${fmt(fp32Cpu)} us vs simple ${fmt(missCpu)} us (+${fmt(fp32Cpu - missCpu)})` },
    { name: 'gRPC front door CPU <= HTTP', met: grpcMissCpu <= missCpu && hitRateGrpc <= hitRateHttp, detail: `misses ${fmt(grpcMissCpu)} vs ${fmt(missCpu)} us; hits at the same rate ${fmt(hitRateGrpc)} vs ${fmt(hitRateHttp)} us` },
  ];
}
