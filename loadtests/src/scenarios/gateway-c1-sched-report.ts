/**
 * The report of gateway-c1-sched.ts: each request of a target (gateway, nginx, direct) joined with the
 * scheduler trace (gateway-c1-sched-join.ts), the slowest 5% sorted into what made them slow, by the part
 * that grew most over the target's median request: the server's main thread waiting for its core (and who
 * held it), running longer, the node (run and wait), the load generator (run and wait), or none of them.
 */
import { runOf, threadInWindow, type SchedTrace, type ThreadInWindow } from './gateway-c1-sched-join.js';

export interface Roles {
  readonly gateway: readonly number[];
  readonly nginx: readonly number[];
  readonly node: readonly number[];
  readonly client: readonly number[];
  readonly redis: readonly number[];
  readonly gatewayPid: number;
  readonly nodePid: number;
  readonly clientPid: number;
}

export interface RequestJoin {
  readonly startNs: number;
  readonly latencyNs: number;
  /** The server's event-loop thread (gateway main, nginx worker); absent for direct. */
  readonly server?: ThreadInWindow;
  /** The gateway's other threads' run time (V8's platform workers, libuv's pool), on core 0 with main. */
  readonly serverOthersRunNs: number;
  readonly nodeMain: ThreadInWindow;
  readonly nodeOthersRunNs: number;
  readonly client: ThreadInWindow;
  readonly redisRunNs: number;
  /** With the tail probe loaded (SCHED_PROBE=1): GC pauses and timer callbacks on the gateway's main thread in the window. */
  gcNs?: number;
  timerNs?: number;
  category?: string;
}

/** What the tail probe (gateway-tail-probe.mjs) saw on the gateway's main thread, as [startNs, durationNs]. */
export interface MainThreadMarks {
  readonly gc: readonly [number, number][];
  readonly timers: readonly [number, number][];
}

const overlapSum = (marks: readonly [number, number][], t0: number, t1: number): number =>
  marks.reduce((n, [start, duration]) => n + Math.max(0, Math.min(t1, start + duration) - Math.max(t0, start)), 0);

/** Adds the probe's GC and timer time to each gateway request and names what ran long in the slow ones. */
export function addMarks(join: TargetJoin, marks: MainThreadMarks): void {
  for (const r of join.requests) {
    r.gcNs = overlapSum(marks.gc, r.startNs, r.startNs + r.latencyNs);
    r.timerNs = overlapSum(marks.timers, r.startNs, r.startNs + r.latencyNs);
    if (r.category === 'server main running') r.category = r.gcNs > 200_000 ? 'server main running: a GC' : r.timerNs > 200_000 ? 'server main running: a timer' : 'server main running: the request';
  }
  const slow = [...join.requests].sort((a, b) => b.latencyNs - a.latencyNs).slice(0, Math.ceil(join.requests.length * 0.05));
  const summary = join.summary as { categories: Record<string, number>; categoriesP99: Record<string, number>; withGc?: string };
  summary.categories = count(slow);
  summary.categoriesP99 = count(slow.slice(0, Math.ceil(join.requests.length * 0.01)));
  const share = (list: readonly RequestJoin[]): string => `${Math.round((100 * list.filter((r) => (r.gcNs ?? 0) > 0).length) / Math.max(1, list.length))}%`;
  summary.withGc = `a GC in ${share(join.requests)} of all, ${share(slow)} of the slowest 5%`;
}

export interface TargetSummary {
  readonly n: number;
  /** CPU over the whole pass per request, µs: the server's main thread, all its threads, the node's threads. */
  readonly cpuMainUs: number;
  readonly cpuAllUs: number;
  readonly cpuNodeUs: number;
  readonly p50Us: number;
  readonly p95Us: number;
  readonly p99Us: number;
  /** Latency less the time our threads waited for another process of the box (foreignWaitNs), µs. */
  readonly ownP50Us: number;
  readonly ownP95Us: number;
  readonly ownP99Us: number;
  /** Means over all requests and over the slowest 5%, µs. */
  readonly all: Record<string, number>;
  readonly slow: Record<string, number>;
  /** Slowest 5%: how many fell in each category. */
  readonly categories: Record<string, number>;
  /** Slowest 1%: the same. */
  readonly categoriesP99: Record<string, number>;
  /** Who held core 0 while the server's main thread waited, µs per request: all and slowest 5%. */
  readonly heldByAll: Record<string, number>;
  readonly heldBySlow: Record<string, number>;
  /** Who held core 1 while the load generator or the node's main thread waited, µs per request. */
  readonly core1HeldByAll: Record<string, number>;
  readonly core1HeldBySlow: Record<string, number>;
}

export interface TargetJoin {
  readonly requests: RequestJoin[];
  readonly summary: TargetSummary;
}

const KERNEL = /^(kworker|ksoftirqd|kdamond|migration|rcu|kcompactd|khugepaged|watchdog|cpuhp|irq\/|kthreadd|jbd2|kswapd|kauditd|oom_reaper)/;

export function holderLabel(roles: Roles): (tid: number, comm: string) => string {
  const gateway = new Set(roles.gateway);
  const node = new Set(roles.node);
  const client = new Set(roles.client);
  const redis = new Set(roles.redis);
  const nginx = new Set(roles.nginx);
  return (tid, comm) => {
    if (tid === 0) return 'idle';
    if (gateway.has(tid)) return tid === roles.gatewayPid ? 'gateway main' : `gateway thread +${tid - roles.gatewayPid}`;
    if (node.has(tid)) return 'node';
    if (client.has(tid)) return 'load generator';
    if (redis.has(tid)) return 'redis';
    if (nginx.has(tid)) return 'nginx worker';
    if (KERNEL.test(comm)) return `kernel ${comm.replace(/[/:].*$/, '')}`;
    return `other process (${comm})`;
  };
}

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const median = (values: readonly number[]): number => quantile([...values].sort((a, b) => a - b), 0.5);

/** Whether a core's holder is another process of the box (not ours, not the kernel's, not idle). */
const foreign = (holder: string): boolean => holder.startsWith('other process');
const ownThread = (holder: string): boolean => holder.startsWith('gateway thread');
const sumWhere = (record: Record<string, number>, keep: (holder: string) => boolean): number => Object.entries(record).reduce((n, [k, v]) => (keep(k) ? n + v : n), 0);

/** Time a request spent on threads of ours waiting while another process of the box held their core, ns. */
export function foreignWaitNs(r: RequestJoin): number {
  const waits = [r.server?.heldBy ?? {}, r.nodeMain.heldBy, r.client.heldBy].reduce((n, held) => n + sumWhere(held, foreign), 0);
  return Math.min(r.latencyNs, waits);
}

/** The parts a request's time is sorted by, ns. */
function parts(r: RequestJoin): Record<string, number> {
  const held = r.server?.heldBy ?? {};
  return {
    'server main waiting for another process': sumWhere(held, foreign),
    'server main waiting for its own threads': sumWhere(held, ownThread),
    'server main waiting for a kernel thread or ours on core 1': sumWhere(held, (k) => !foreign(k) && !ownThread(k)),
    'server main running': r.server?.runNs ?? 0,
    'node or load generator waiting for another process': sumWhere(r.nodeMain.heldBy, foreign) + sumWhere(r.client.heldBy, foreign),
    'node (run + wait)': r.nodeMain.runNs + r.nodeMain.waitNs - sumWhere(r.nodeMain.heldBy, foreign) + r.nodeOthersRunNs,
    'load generator (run + wait)': r.client.runNs + r.client.waitNs - sumWhere(r.client.heldBy, foreign),
    redis: r.redisRunNs,
  };
}

function categorize(requests: RequestJoin[]): void {
  const medians: Record<string, number> = {};
  for (const key of Object.keys(parts(requests[0] as RequestJoin))) medians[key] = median(requests.map((r) => parts(r)[key] as number));
  const medianLatency = median(requests.map((r) => r.latencyNs));
  for (const r of requests) {
    const excess = Object.entries(parts(r)).map(([k, v]) => [k, v - (medians[k] as number)] as const).sort((a, b) => b[1] - a[1]);
    const [top, grew] = excess[0] as readonly [string, number];
    if (grew < 0.25 * (r.latencyNs - medianLatency)) {
      r.category = 'none of the watched threads (all asleep: the wire, an idle wake-up)';
      continue;
    }
    r.category = top;
  }
}

function merge(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

const us = (ns: number): number => Math.round(ns / 100) / 10;

function means(requests: readonly RequestJoin[]): Record<string, number> {
  const sum: Record<string, number> = { latency: 0, 'less foreign waits': 0, 'server preemptions': 0, 'server wake-ups': 0, 'server longest wait': 0, 'gateway other threads': 0, 'load generator run': 0, 'load generator wait': 0, 'node main run': 0, 'node main wait': 0 };
  for (const r of requests) {
    sum.latency = (sum.latency as number) + r.latencyNs;
    sum['less foreign waits'] = (sum['less foreign waits'] as number) + r.latencyNs - foreignWaitNs(r);
    for (const [k, v] of Object.entries(parts(r))) sum[k] = (sum[k] ?? 0) + v;
    sum['server wake-ups'] = (sum['server wake-ups'] as number) + (r.server?.wakes ?? 0) * 1000;
    sum['server preemptions'] = (sum['server preemptions'] as number) + (r.server?.preemptions ?? 0) * 1000;
    sum['server longest wait'] = (sum['server longest wait'] as number) + (r.server?.longestWaitNs ?? 0);
    sum['gateway other threads'] = (sum['gateway other threads'] as number) + r.serverOthersRunNs;
    sum['load generator run'] = (sum['load generator run'] as number) + r.client.runNs;
    sum['load generator wait'] = (sum['load generator wait'] as number) + r.client.waitNs;
    sum['node main run'] = (sum['node main run'] as number) + r.nodeMain.runNs;
    sum['node main wait'] = (sum['node main wait'] as number) + r.nodeMain.waitNs;
  }
  return Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, us(v / Math.max(1, requests.length))]));
}

function heldBy(requests: readonly RequestJoin[], of: (r: RequestJoin) => Record<string, number> | undefined): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const r of requests) for (const [k, v] of Object.entries(of(r) ?? {})) sum[k] = (sum[k] ?? 0) + v;
  return Object.fromEntries(Object.entries(sum).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, us(v / Math.max(1, requests.length))]));
}

function count(requests: readonly RequestJoin[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) out[r.category ?? '?'] = (out[r.category ?? '?'] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}

export function joinRequests(trace: SchedTrace, target: string, timed: readonly [number, number][], roles: Roles): TargetJoin {
  const label = holderLabel(roles);
  const serverTid = target === 'gateway' ? roles.gatewayPid : target === 'nginx' ? roles.nginx[0] : undefined;
  const others = target === 'gateway' ? roles.gateway.filter((t) => t !== roles.gatewayPid) : [];
  const nodeOthers = roles.node.filter((t) => t !== roles.nodePid);
  const requests: RequestJoin[] = timed.map(([t0, t1]) => ({
    startNs: t0,
    latencyNs: t1 - t0,
    ...(serverTid === undefined ? {} : { server: threadInWindow(trace, serverTid, t0, t1, label) }),
    serverOthersRunNs: runOf(trace, others, t0, t1),
    nodeMain: threadInWindow(trace, roles.nodePid, t0, t1, label),
    nodeOthersRunNs: runOf(trace, nodeOthers, t0, t1),
    client: threadInWindow(trace, roles.clientPid, t0, t1, label),
    redisRunNs: runOf(trace, roles.redis, t0, t1),
  }));
  if (requests.length === 0) throw new Error(`no ${target} requests to join`);
  categorize(requests);
  const byLatency = [...requests].sort((a, b) => a.latencyNs - b.latencyNs);
  const sorted = byLatency.map((r) => r.latencyNs);
  const first = timed[0]?.[0] ?? 0;
  const last = timed[timed.length - 1]?.[1] ?? 0;
  const serverTids = target === 'gateway' ? roles.gateway : target === 'nginx' ? roles.nginx : [];
  const perRequest = (tids: readonly number[]): number => us(runOf(trace, tids, first, last) / requests.length);
  const own = requests.map((r) => r.latencyNs - foreignWaitNs(r)).sort((a, b) => a - b);
  const slow = byLatency.slice(Math.floor(0.95 * byLatency.length));
  const slowest = byLatency.slice(Math.floor(0.99 * byLatency.length));
  return {
    requests,
    summary: {
      n: requests.length,
      cpuMainUs: serverTid === undefined ? 0 : perRequest([serverTid]),
      cpuAllUs: perRequest(serverTids),
      cpuNodeUs: perRequest(roles.node),
      p50Us: us(quantile(sorted, 0.5)),
      p95Us: us(quantile(sorted, 0.95)),
      p99Us: us(quantile(sorted, 0.99)),
      ownP50Us: us(quantile(own, 0.5)),
      ownP95Us: us(quantile(own, 0.95)),
      ownP99Us: us(quantile(own, 0.99)),
      all: means(requests),
      slow: means(slow),
      categories: count(slow),
      categoriesP99: count(slowest),
      heldByAll: heldBy(requests, (r) => r.server?.heldBy),
      heldBySlow: heldBy(slow, (r) => r.server?.heldBy),
      core1HeldByAll: heldBy(requests, (r) => merge(r.client.heldBy, r.nodeMain.heldBy)),
      core1HeldBySlow: heldBy(slow, (r) => merge(r.client.heldBy, r.nodeMain.heldBy)),
    },
  };
}

const fmt = (record: Record<string, number>, limit = 6): string => Object.entries(record).slice(0, limit).map(([k, v]) => `${k} ${v}`).join('; ');

export function schedTable(targets: Record<string, readonly TargetJoin[]>): string {
  const rows = Object.entries(targets).flatMap(([name, rounds]) => rounds.map((r, i) => [`${name} ${i + 1}`, r.summary] as const));
  const out = ['Latency, µs (and less the time our threads waited for another process of the box):', '', '| target round | n | p50 / p95 / p99 | less foreign waits: p50 / p95 / p99 | CPU per request over the pass: server main / all its threads / node |', '| --- | --- | --- | --- | --- |'];
  for (const [name, s] of rows) out.push(`| ${name} | ${s.n} | ${s.p50Us} / ${s.p95Us} / ${s.p99Us} | ${s.ownP50Us} / ${s.ownP95Us} / ${s.ownP99Us} | ${s.cpuMainUs} / ${s.cpuAllUs} / ${s.cpuNodeUs} |`);
  const keys = Object.keys(rows[0]?.[1].all ?? {});
  out.push('', 'Means per request, all → slowest 5%, µs (wake-ups and preemptions ×1000):', '', `| part | ${rows.map(([n]) => n).join(' | ')} |`, `| --- |${rows.map(() => ' --- |').join('')}`);
  for (const k of keys) out.push(`| ${k} | ${rows.map(([, s]) => `${s.all[k]} → ${s.slow[k]}`).join(' | ')} |`);
  out.push('', 'What grew most over the median request (count of the slowest 5%; of the slowest 1%):', '', '| target round | slowest 5% | slowest 1% |', '| --- | --- | --- |');
  for (const [name, s] of rows) out.push(`| ${name} | ${fmt(s.categories, 8)}${(s as { withGc?: string }).withGc === undefined ? '' : ` (${(s as { withGc?: string }).withGc})`} | ${fmt(s.categoriesP99, 8)} |`);
  out.push('', 'Who held the core while our threads waited, µs per request, all → slowest 5%:', '', '| target round | core 0 (server main waiting) | core 1 (load generator or node main waiting) |', '| --- | --- | --- |');
  for (const [name, s] of rows) out.push(`| ${name} | ${fmt(s.heldByAll, 5)} → ${fmt(s.heldBySlow, 6)} | ${fmt(s.core1HeldByAll, 5)} → ${fmt(s.core1HeldBySlow, 6)} |`);
  return out.join('\n');
}
