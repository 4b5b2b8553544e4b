/**
 * Lines up gateway-c1-tail.ts's requests with what the gateway did while each one was in flight: its
 * own server time for the request (so the rest is outside the gateway: sockets, the node, this load
 * generator), the GCs and timer callbacks that overlapped it, the outgoing writes (Redis, by port), how
 * long its main thread waited for the core and how long its other threads (V8's GC helpers, libuv's
 * pool) ran. The slowest 1% and 2% are compared with all requests, so a cause shows as a share far
 * above its base rate.
 */
import { percentile } from '../lib/sampling/percentiles.js';

export interface TimedRequest {
  readonly startNs: number;
  readonly endNs: number;
  /** Gateway only: its main thread's runqueue wait, and its other threads' run time, over the request and the gap before the next. */
  readonly mainWaitNs?: number;
  /** Gateway only: its main thread's run time over the request and the gap before the next. */
  readonly mainRunNs?: number;
  readonly otherRunNs?: number;
  /** The same by thread, keyed by tid - pid (V8's platform workers start right after the main thread; libuv's pool later). */
  readonly otherByTid?: Readonly<Record<number, number>>;
}

export interface ProbeDump {
  readonly pid: number;
  /** [startNs, durationMs, kind] */
  readonly gc: [number, number, number][];
  /** [startNs, durationNs, kind, delayMs, label] */
  readonly timers: [number, number, string, number, string][];
  /** [startNs, durationNs, young-generation bytes allocated (-1: not sampled or a GC ran)] */
  readonly requests: [number, number, number][];
  /** [atNs, remotePort, bytes] */
  readonly outgoing: [number, number, number][];
  readonly memory?: { rss: number; heapTotal: number; heapUsed: number };
  readonly heapSpaces?: { space_name: string; space_size: number; space_used_size: number }[];
  /** [gapNs, young bytes allocated between two requests] (TAIL_PROBE_ALLOC=1) */
  readonly gaps?: [number, number][];
  /** TAIL_PROBE_HEAP_SAMPLE=1: bytes allocated (garbage included) by the last frames of the stack, largest first. */
  readonly heap?: [string, number][] | string;
  /** The request at which heap sampling started (TAIL_PROBE_HEAP_FROM), 0 from start-up. */
  readonly heapFrom?: number;
}

/** The gateway's memory and GC cost over the run: what a GC flag trades. */
export interface GcCost {
  readonly rssMiB: number;
  readonly heapTotalMiB: number;
  readonly newSpaceMiB: number;
  /** Median young-generation bytes allocated by one request (TAIL_PROBE_ALLOC=1), else NaN. */
  readonly youngBytesPerRequest: number;
  /** Young bytes allocated between requests (timers, Redis replies, load reports): the median gap's, and per ms of gap overall. */
  readonly youngBytesPerGap: number;
  readonly youngBytesPerGapMs: number;
  readonly requests: number;
  readonly minorPer1000: number;
  readonly minorMedianMs: number;
  readonly minorP90Ms: number;
  /** Main-thread CPU per gateway request (schedstat, the request and the gap after it), µs. */
  readonly mainRunUsPerRequest: number;
  readonly otherRunUsPerRequest: number;
}

export interface PathSummary {
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly p999Us: number;
  readonly maxUs: number;
}

export interface GatewayRequestView {
  readonly latencyUs: number;
  /** NaN when no server record fell inside the request. */
  readonly serverUs: number;
  readonly gcUs: number;
  readonly gcKinds: string;
  readonly timerUs: number;
  readonly timerLabels: string;
  readonly redisWrites: number;
  readonly mainWaitUs: number;
  readonly otherRunUs: number;
  readonly otherByTid: string;
  readonly mainRunUs: number;
}

export interface TailSet {
  readonly name: string;
  readonly count: number;
  readonly latencyUs: number;
  readonly serverUs: number;
  readonly outsideUs: number;
  readonly withGc: number;
  readonly gcUs: number;
  readonly withTimer: number;
  readonly timerUs: number;
  readonly withRedis: number;
  readonly mainWaitUs: number;
  readonly otherRunUs: number;
  readonly mainRunUs: number;
}

export interface TailRound {
  readonly paths: Record<'gateway' | 'direct' | 'anchor', PathSummary>;
  /**
   * The gateway's own CPU on its main thread per request (schedstat: the request and the gap after it):
   * a tail that the box's other processes cannot make, since time spent waiting for the core is not in it.
   */
  readonly mainRun: PathSummary;
  readonly sets: TailSet[];
  readonly slowest: GatewayRequestView[];
  /** Other threads' run time per gateway request, by tid - pid: over all requests and over the slowest 1%. */
  readonly threadsAll: Record<string, number>;
  readonly threadsSlowest: Record<string, number>;
}

export interface TailReport {
  readonly rounds: TailRound[];
  readonly gcCost: GcCost;
  /** From the sampling heap profiler: bytes per gateway request by allocating stack (whole run, start-up included). */
  readonly allocations?: { stack: string; bytesPerRequest: number }[];
  /** GC counts and total pause by kind over the whole run. */
  readonly gcByKind: Record<string, { count: number; totalMs: number; maxMs: number }>;
  /** Timer callbacks over the whole run by label (the long ones) or delay. */
  readonly timersByLabel: { label: string; count: number; totalUs: number; maxUs: number }[];
}

/** perf_hooks' gc kinds (NODE_PERFORMANCE_GC_*): 1 minor (scavenge), 4 major, 8 incremental, 16 weak callbacks. */
const GC_KINDS: Record<number, string> = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weakcb' };
const gcKind = (kind: number): string => GC_KINDS[kind] ?? `kind${kind}`;

const overlapNs = (a0: number, a1: number, b0: number, b1: number): number => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

function summarize(timed: readonly TimedRequest[]): PathSummary {
  const sorted = timed.map((t) => (t.endNs - t.startNs) / 1000).sort((a, b) => a - b);
  return { p50Us: percentile(sorted, 50), p90Us: percentile(sorted, 90), p99Us: percentile(sorted, 99), p999Us: percentile(sorted, 99.9), maxUs: sorted[sorted.length - 1] ?? Number.NaN };
}

/** First index of `sorted` (by [0]) whose start is >= `ns`. */
function lowerBound(sorted: readonly (readonly unknown[])[], ns: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid]?.[0] as number) < ns) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function view(t: TimedRequest, dump: ProbeDump, redisPort: number): GatewayRequestView {
  const server = dump.requests[lowerBound(dump.requests, t.startNs)];
  const serverUs = server !== undefined && server[0] <= t.endNs ? server[1] / 1000 : Number.NaN;
  let gcNs = 0;
  const kinds: string[] = [];
  // GCs and timers that began up to 100 ms before the request may still overlap it.
  for (let i = lowerBound(dump.gc, t.startNs - 1e8); i < dump.gc.length && (dump.gc[i]?.[0] as number) < t.endNs; i++) {
    const [start, ms, kind] = dump.gc[i] as [number, number, number];
    const o = overlapNs(start, start + ms * 1e6, t.startNs, t.endNs);
    if (o > 0) {
      gcNs += o;
      kinds.push(`${gcKind(kind)} ${ms.toFixed(2)}ms`);
    }
  }
  let timerNs = 0;
  const labels: string[] = [];
  for (let i = lowerBound(dump.timers, t.startNs - 1e8); i < dump.timers.length && (dump.timers[i]?.[0] as number) < t.endNs; i++) {
    const [start, took, kind, delay, label] = dump.timers[i] as [number, number, string, number, string];
    const o = overlapNs(start, start + took, t.startNs, t.endNs);
    if (o > 0) {
      timerNs += o;
      labels.push(`${kind} ${delay}ms ${(took / 1000).toFixed(0)}µs${label ? ` ${label.slice(0, 60)}` : ''}`);
    }
  }
  let redisWrites = 0;
  for (let i = lowerBound(dump.outgoing, t.startNs); i < dump.outgoing.length && (dump.outgoing[i]?.[0] as number) < t.endNs; i++) {
    if (dump.outgoing[i]?.[1] === redisPort) redisWrites++;
  }
  return {
    latencyUs: (t.endNs - t.startNs) / 1000,
    serverUs,
    gcUs: gcNs / 1000,
    gcKinds: kinds.join(', '),
    timerUs: timerNs / 1000,
    timerLabels: labels.join('; '),
    redisWrites,
    mainWaitUs: (t.mainWaitNs ?? 0) / 1000,
    otherRunUs: (t.otherRunNs ?? 0) / 1000,
    mainRunUs: (t.mainRunNs ?? 0) / 1000,
    otherByTid: Object.entries(t.otherByTid ?? {}).map(([tid, ns]) => `+${tid}:${(ns / 1000).toFixed(0)}`).join(' '),
  };
}

const mean = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

function tailSet(name: string, views: readonly GatewayRequestView[]): TailSet {
  const served = views.filter((v) => Number.isFinite(v.serverUs));
  return {
    name,
    count: views.length,
    latencyUs: mean(views.map((v) => v.latencyUs)),
    serverUs: mean(served.map((v) => v.serverUs)),
    outsideUs: mean(served.map((v) => v.latencyUs - v.serverUs)),
    withGc: views.filter((v) => v.gcUs > 0).length / views.length,
    gcUs: mean(views.map((v) => v.gcUs)),
    withTimer: views.filter((v) => v.timerUs > 0).length / views.length,
    timerUs: mean(views.map((v) => v.timerUs)),
    withRedis: views.filter((v) => v.redisWrites > 0).length / views.length,
    mainWaitUs: mean(views.map((v) => v.mainWaitUs)),
    otherRunUs: mean(views.map((v) => v.otherRunUs)),
    mainRunUs: mean(views.map((v) => v.mainRunUs)),
  };
}

/** Mean run time (µs) per request of each other thread, by tid - pid. */
function perThread(timed: readonly TimedRequest[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const t of timed) for (const [tid, ns] of Object.entries(t.otherByTid ?? {})) sums[`+${tid}`] = (sums[`+${tid}`] ?? 0) + ns / 1000 / timed.length;
  return sums;
}

export function tailReport(runs: readonly { gateway: TimedRequest[]; direct: TimedRequest[]; anchor: TimedRequest[] }[], dump: ProbeDump, ports: { redisPort: number; upstreamPort: number }): TailReport {
  const sorted: ProbeDump = {
    pid: dump.pid,
    gc: [...dump.gc].sort((a, b) => a[0] - b[0]),
    timers: [...dump.timers].sort((a, b) => a[0] - b[0]),
    requests: [...dump.requests].sort((a, b) => a[0] - b[0]),
    outgoing: [...dump.outgoing].sort((a, b) => a[0] - b[0]),
  };
  const rounds = runs.map((run): TailRound => {
    const views = run.gateway.map((t) => view(t, sorted, ports.redisPort)).sort((a, b) => b.latencyUs - a.latencyUs);
    const top = (share: number) => views.slice(0, Math.max(1, Math.round(views.length * share)));
    const p50 = views[Math.floor(views.length / 2)];
    const middle = views.filter((v) => p50 !== undefined && Math.abs(v.latencyUs - p50.latencyUs) <= 0.05 * p50.latencyUs);
    const byCpu = [...views].sort((a, b) => b.mainRunUs - a.mainRunUs);
    const mainRun = summarize(run.gateway.map((t) => ({ startNs: 0, endNs: t.mainRunNs ?? 0 })));
    return {
      paths: { gateway: summarize(run.gateway), direct: summarize(run.direct), anchor: summarize(run.anchor) },
      mainRun,
      sets: [
        tailSet('slowest 1%', top(0.01)),
        tailSet('slowest 2%', top(0.02)),
        tailSet('p50 ± 5%', middle),
        tailSet('all', views),
        tailSet('most main-thread CPU, top 1%', byCpu.slice(0, Math.max(1, Math.round(byCpu.length * 0.01)))),
      ],
      slowest: top(0.01).slice(0, 25),
      threadsAll: perThread(run.gateway),
      threadsSlowest: perThread([...run.gateway].sort((a, b) => b.endNs - b.startNs - (a.endNs - a.startNs)).slice(0, Math.max(1, Math.round(run.gateway.length * 0.01)))),
    };
  });
  const gcByKind: TailReport['gcByKind'] = {};
  for (const [, ms, kind] of dump.gc) {
    const entry = (gcByKind[gcKind(kind)] ??= { count: 0, totalMs: 0, maxMs: 0 });
    entry.count++;
    entry.totalMs += ms;
    entry.maxMs = Math.max(entry.maxMs, ms);
  }
  const byLabel = new Map<string, { label: string; count: number; totalUs: number; maxUs: number }>();
  for (const [, took, kind, delay, label] of dump.timers) {
    const key = label || `${kind} ${delay}ms (short callbacks)`;
    const entry = byLabel.get(key) ?? { label: key.slice(0, 100), count: 0, totalUs: 0, maxUs: 0 };
    entry.count++;
    entry.totalUs += took / 1000;
    entry.maxUs = Math.max(entry.maxUs, took / 1000);
    byLabel.set(key, entry);
  }
  const minor = dump.gc.filter((g) => g[2] === 1).map((g) => g[1]).sort((a, b) => a - b);
  const allocs = dump.requests.map((r) => r[2]).filter((b) => b > 0).sort((a, b) => a - b);
  const gatewayRequests = runs.flatMap((run) => run.gateway);
  const newSpace = dump.heapSpaces?.find((space) => space.space_name === 'new_space');
  const gcCost: GcCost = {
    rssMiB: (dump.memory?.rss ?? Number.NaN) / 2 ** 20,
    heapTotalMiB: (dump.memory?.heapTotal ?? Number.NaN) / 2 ** 20,
    newSpaceMiB: (newSpace?.space_size ?? Number.NaN) / 2 ** 20,
    youngBytesPerRequest: percentile(allocs, 50),
    youngBytesPerGap: percentile((dump.gaps ?? []).map((g) => g[1]).filter((b) => b >= 0).sort((a, b) => a - b), 50),
    youngBytesPerGapMs: (() => {
      const gaps = (dump.gaps ?? []).filter((g) => g[1] >= 0);
      return gaps.reduce((n, g) => n + g[1], 0) / (gaps.reduce((n, g) => n + g[0], 0) / 1e6);
    })(),
    requests: dump.requests.length,
    minorPer1000: (minor.length * 1000) / dump.requests.length,
    minorMedianMs: percentile(minor, 50),
    minorP90Ms: percentile(minor, 90),
    mainRunUsPerRequest: mean(gatewayRequests.map((t) => (t.mainRunNs ?? 0) / 1000)),
    otherRunUsPerRequest: mean(gatewayRequests.map((t) => (t.otherRunNs ?? 0) / 1000)),
  };
  const allocations = Array.isArray(dump.heap) ? dump.heap.map(([stack, bytes]) => ({ stack, bytesPerRequest: bytes / Math.max(1, dump.requests.length - Math.max(0, (dump.heapFrom ?? 0) - 1)) })) : undefined;
  return { rounds, gcCost, ...(allocations ? { allocations } : {}), gcByKind, timersByLabel: [...byLabel.values()].sort((a, b) => b.totalUs - a.totalUs).slice(0, 30) };
}

const f = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const pct = (n: number): string => `${(n * 100).toFixed(0)}%`;

export function tailTable(report: TailReport): string {
  const lines: string[] = [];
  report.rounds.forEach((round, r) => {
    lines.push(`### round ${r + 1}`, '', '| path | p50 µs | p90 | p99 | p99.9 | max |', '| --- | --- | --- | --- | --- | --- |');
    for (const [name, s] of Object.entries(round.paths)) lines.push(`| ${name} | ${f(s.p50Us)} | ${f(s.p90Us)} | ${f(s.p99Us)} | ${f(s.p999Us)} | ${f(s.maxUs)} |`);
    const m = round.mainRun;
    lines.push(`| gateway main-thread CPU per request | ${f(m.p50Us)} | ${f(m.p90Us)} | ${f(m.p99Us)} | ${f(m.p999Us)} | ${f(m.maxUs)} |`);
    lines.push('', '| gateway requests | n | latency µs | gateway server time | outside the gateway | with GC | GC µs | with timer | timer µs | with Redis write | main thread runqueue wait µs | other threads ran µs | main thread ran µs |', '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const s of round.sets) {
      lines.push(`| ${s.name} | ${s.count} | ${f(s.latencyUs)} | ${f(s.serverUs)} | ${f(s.outsideUs)} | ${pct(s.withGc)} | ${f(s.gcUs)} | ${pct(s.withTimer)} | ${f(s.timerUs)} | ${pct(s.withRedis)} | ${f(s.mainWaitUs)} | ${f(s.otherRunUs)} | ${f(s.mainRunUs)} |`);
    }
    const threads = (m: Record<string, number>): string => Object.entries(m).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([tid, us]) => `${tid} ${f(us)}`).join(', ');
    lines.push('', `other threads, µs per request by tid - pid: all ${threads(round.threadsAll)}; slowest 1% ${threads(round.threadsSlowest)}`);
    lines.push('', 'slowest requests: latency / server / GC / timer / main wait / other threads (µs), GCs, timers', '');
    for (const v of round.slowest) {
      lines.push(`- ${f(v.latencyUs)} / ${f(v.serverUs)} / ${f(v.gcUs)} / ${f(v.timerUs)} / ${f(v.mainWaitUs)} / ${f(v.otherRunUs)}${v.otherByTid ? ` (${v.otherByTid})` : ''}${v.redisWrites > 0 ? ` / redis ${v.redisWrites}` : ''}${v.gcKinds ? ` [${v.gcKinds}]` : ''}${v.timerLabels ? ` {${v.timerLabels}}` : ''}`);
    }
    lines.push('');
  });
  const c = report.gcCost;
  lines.push(`gateway memory at the end: RSS ${f(c.rssMiB, 1)} MiB, heap ${f(c.heapTotalMiB, 1)} MiB, new space ${f(c.newSpaceMiB, 1)} MiB; young bytes per request (median) ${f(c.youngBytesPerRequest)}, between requests ${f(c.youngBytesPerGap)} (median gap; ${f(c.youngBytesPerGapMs)} per ms of gap); scavenges per 1000 requests ${f(c.minorPer1000, 1)} (median ${f(c.minorMedianMs, 2)} ms, p90 ${f(c.minorP90Ms, 2)} ms over ${c.requests} requests); main thread ${f(c.mainRunUsPerRequest)} µs and other threads ${f(c.otherRunUsPerRequest)} µs of CPU per gateway request`, '');
  lines.push('GC over the run:', '');
  for (const [kind, g] of Object.entries(report.gcByKind)) lines.push(`- ${kind}: ${g.count}, total ${f(g.totalMs, 1)} ms, max ${f(g.maxMs, 2)} ms`);
  if (report.allocations !== undefined) {
    lines.push('', 'allocations (sampled, garbage included), bytes per gateway request by stack (innermost first):', '');
    for (const a of report.allocations.slice(0, 40)) lines.push(`- ${f(a.bytesPerRequest)} ${a.stack.split(' < ').reverse().join(' < ')}`);
  }
  lines.push('', 'timer callbacks over the run (sync part):', '');
  for (const t of report.timersByLabel) lines.push(`- ${t.label}: ${t.count}, total ${f(t.totalUs)} µs, max ${f(t.maxUs)} µs`);
  return lines.join('\n');
}
