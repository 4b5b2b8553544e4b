/**
 * Joins requests timed on CLOCK_MONOTONIC with the kernel's scheduler trace of the same window
 * (`perf sched record -k mono`, read back with `perf script --ns -F tid,cpu,time,event,trace`): for every
 * request and every watched thread, how long it ran, how long it was runnable but waiting for a core
 * (and who ran on that core instead), and how often it was woken. Pure functions: the scenario
 * (gateway-c1-sched.ts) records, this reads.
 */

/** One thread's time, split into the states the scheduler trace shows. */
interface Segment {
  readonly start: number;
  readonly end: number;
  /** `run`: on a core; `wait`: runnable, not on a core (woken or preempted). */
  readonly state: 'run' | 'wait';
  readonly cpu: number;
}

/** Who held a core from `start` to `end`. */
interface Occupant {
  readonly start: number;
  readonly end: number;
  readonly tid: number;
  readonly comm: string;
}

export interface SchedTrace {
  /** Per watched tid, its run / wait segments in time order. */
  readonly segments: Map<number, Segment[]>;
  /** Per tid, its wake-up times (sched_waking) in order. */
  readonly wakes: Map<number, number[]>;
  /** Per tid, when it was switched out while still runnable (preempted), in order. */
  readonly preemptions: Map<number, number[]>;
  /** Per core, who ran on it, in time order. */
  readonly occupants: Map<number, Occupant[]>;
  /** Wake-ups of watched threads onto a core that was idle: how long it had idled, how long the wake took. */
  readonly idleWakes: IdleWake[];
  readonly firstNs: number;
  readonly lastNs: number;
  readonly events: number;
}

export interface IdleWake {
  readonly cpu: number;
  readonly tid: number;
  /** From the core going idle to the wake-up (sched_waking). */
  readonly idleBeforeNs: number;
  /** From the wake-up to the thread on the core (sched_switch). */
  readonly latencyNs: number;
}

const LINE = /^\s*(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(\w+):\s+(.*)$/;
const SWITCH = /prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)/;
const WAKING = /comm=(.*?) pid=(\d+) prio=\d+ target_cpu=(\d+)/;
const RUNTIME = /comm=(.*?) pid=(\d+) runtime=(\d+)/;

const toNs = (seconds: string, fraction: string): number => Number(seconds) * 1e9 + Number(fraction.padEnd(9, '0').slice(0, 9));

interface SchedEvent {
  readonly cpu: number;
  readonly t: number;
  readonly kind: 'switch' | 'waking' | 'runtime';
  /** The task running on `cpu` when the event fired (-1: unknown). */
  readonly current: number;
  readonly comm: string;
  /** switch: prev, state, next; waking: the woken tid; runtime: ns since its last update. */
  readonly prev?: number;
  readonly prevState?: string;
  readonly next?: number;
  readonly woken?: number;
  readonly runtimeNs?: number;
}

function parseLine(line: string): SchedEvent | undefined {
  const m = LINE.exec(line);
  if (m === null) return undefined;
  const cpu = Number(m[2]);
  const t = toNs(m[3] as string, m[4] as string);
  const body = m[6] as string;
  switch (m[5]) {
    case 'sched_switch': {
      const s = SWITCH.exec(body);
      return s === null ? undefined : { cpu, t, kind: 'switch', current: Number(s[2]), comm: s[4] as string, prev: Number(s[2]), prevState: s[3] as string, next: Number(s[5]) };
    }
    case 'sched_waking':
    case 'sched_wakeup_new': {
      const w = WAKING.exec(body);
      return w === null ? undefined : { cpu, t, kind: 'waking', current: Number(m[1]), comm: '', woken: Number(w[2]) };
    }
    case 'sched_stat_runtime': {
      const r = RUNTIME.exec(body);
      return r === null ? undefined : { cpu, t, kind: 'runtime', current: Number(r[2]), comm: r[1] as string, runtimeNs: Number(r[3]) };
    }
    default:
      return undefined;
  }
}

/** How far ahead to look for a task's first runtime update after a switch the trace left out. */
const LOOKAHEAD = 400;

/**
 * Reads `perf script --ns -F tid,cpu,time,event,trace` lines (sched_switch, sched_waking, sched_stat_runtime).
 * Only the tids in `watched` get segments; every core gets its occupants. On this VM the trace leaves out
 * one core's switches out of idle (and wake-ups raised in its idle context): a task seen running on a core
 * whose last switch was to idle is taken to have started at its first runtime update less that runtime
 * (update_curr counts from the switch), never before the core's previous event.
 */
export function parseSchedScript(lines: Iterable<string>, watched: ReadonlySet<number>): SchedTrace {
  const all: SchedEvent[] = [];
  for (const line of lines) {
    const e = parseLine(line);
    if (e !== undefined) all.push(e);
  }
  const segments = new Map<number, Segment[]>();
  const wakes = new Map<number, number[]>();
  const preemptions = new Map<number, number[]>();
  const occupants = new Map<number, Occupant[]>();
  const idleWakes: IdleWake[] = [];
  /** Per watched tid: since when it has been runnable-but-waiting, or running (and where). */
  const waitingSince = new Map<number, number>();
  const runningSince = new Map<number, { t: number; cpu: number }>();
  const onCore = new Map<number, { t: number; tid: number; comm: string }>();
  const lastOnCpu = new Map<number, number>();
  const push = (tid: number, segment: Segment): void => {
    if (segment.end <= segment.start) return;
    let list = segments.get(tid);
    if (list === undefined) segments.set(tid, (list = []));
    list.push(segment);
  };
  const switchAt = (cpu: number, t: number, prev: number, prevState: string, next: number, nextComm: string): void => {
    const held = onCore.get(cpu);
    if (held !== undefined) {
      let list = occupants.get(cpu);
      if (list === undefined) occupants.set(cpu, (list = []));
      if (t > held.t) list.push({ start: held.t, end: t, tid: held.tid, comm: held.comm });
    }
    onCore.set(cpu, { t, tid: next, comm: nextComm });
    if (watched.has(prev)) {
      const ran = runningSince.get(prev);
      if (ran !== undefined) push(prev, { start: ran.t, end: t, state: 'run', cpu: ran.cpu });
      runningSince.delete(prev);
      // Preempted (R, R+): still runnable, so waiting from now on; otherwise asleep until woken.
      if (prevState.startsWith('R')) {
        waitingSince.set(prev, t);
        let list = preemptions.get(prev);
        if (list === undefined) preemptions.set(prev, (list = []));
        list.push(t);
      }
    }
    if (watched.has(next)) {
      const since = waitingSince.get(next);
      if (since !== undefined) push(next, { start: since, end: t, state: 'wait', cpu });
      if (since !== undefined && held !== undefined && held.tid === 0 && held.t <= since) idleWakes.push({ cpu, tid: next, idleBeforeNs: since - held.t, latencyNs: t - since });
      waitingSince.delete(next);
      runningSince.set(next, { t, cpu });
    }
  };
  all.forEach((e, i) => {
    const held = onCore.get(e.cpu);
    if (held !== undefined && e.current > 0 && held.tid !== e.current) {
      // A switch the trace left out: find when it happened.
      let at = e.t;
      let comm = e.kind === 'runtime' ? e.comm : '?';
      for (let j = i; j < Math.min(all.length, i + LOOKAHEAD); j++) {
        const f = all[j] as SchedEvent;
        if (f.cpu !== e.cpu) continue;
        if (f.kind === 'runtime' && f.current === e.current) {
          at = Math.min(e.t, f.t - (f.runtimeNs as number));
          comm = f.comm;
        }
        if (f.kind === 'runtime' || f.kind === 'switch') break;
      }
      switchAt(e.cpu, Math.max(at, lastOnCpu.get(e.cpu) ?? at), held.tid, 'S', e.current, comm);
    }
    lastOnCpu.set(e.cpu, e.t);
    if (e.kind === 'waking') {
      const tid = e.woken as number;
      if (!watched.has(tid)) return;
      let list = wakes.get(tid);
      if (list === undefined) wakes.set(tid, (list = []));
      list.push(e.t);
      if (!runningSince.has(tid) && !waitingSince.has(tid)) waitingSince.set(tid, e.t);
    } else if (e.kind === 'switch') switchAt(e.cpu, e.t, e.prev as number, e.prevState as string, e.next as number, e.comm);
  });
  return { segments, wakes, preemptions, occupants, idleWakes, firstNs: all[0]?.t ?? 0, lastNs: all[all.length - 1]?.t ?? 0, events: all.length };
}

/** The first index whose segment ends after `t` (segments in time order, not overlapping). */
function firstEndingAfter<T extends { end: number }>(list: readonly T[], t: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as T).end <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const overlap = (a0: number, a1: number, b0: number, b1: number): number => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

export interface ThreadInWindow {
  runNs: number;
  waitNs: number;
  wakes: number;
  /** Times it lost its core while still runnable. */
  preemptions: number;
  /** The longest single wait (wake-up or preemption to running) that overlaps the window. */
  longestWaitNs: number;
  /** While it waited: who held the core it then ran on, ns by label. */
  heldBy: Record<string, number>;
}

/** How `tid` spent [t0, t1]; `label` names the holder of a core (a thread of ours, a kernel thread, another process). */
export function threadInWindow(trace: SchedTrace, tid: number, t0: number, t1: number, label: (tid: number, comm: string) => string): ThreadInWindow {
  const out: ThreadInWindow = { runNs: 0, waitNs: 0, wakes: 0, preemptions: 0, longestWaitNs: 0, heldBy: {} };
  const list = trace.segments.get(tid) ?? [];
  for (let i = firstEndingAfter(list, t0); i < list.length; i++) {
    const seg = list[i] as Segment;
    if (seg.start >= t1) break;
    const ns = overlap(seg.start, seg.end, t0, t1);
    if (seg.state === 'run') {
      out.runNs += ns;
      continue;
    }
    out.waitNs += ns;
    out.longestWaitNs = Math.max(out.longestWaitNs, seg.end - seg.start);
    const cores = trace.occupants.get(seg.cpu) ?? [];
    const a = Math.max(seg.start, t0);
    const b = Math.min(seg.end, t1);
    for (let j = firstEndingAfter(cores, a); j < cores.length; j++) {
      const o = cores[j] as Occupant;
      if (o.start >= b) break;
      const key = label(o.tid, o.comm);
      out.heldBy[key] = (out.heldBy[key] ?? 0) + overlap(o.start, o.end, a, b);
    }
  }
  out.wakes = countIn(trace.wakes.get(tid) ?? [], t0, t1);
  out.preemptions = countIn(trace.preemptions.get(tid) ?? [], t0, t1);
  return out;
}

/** How many of the sorted times fall in [t0, t1). */
function countIn(times: readonly number[], t0: number, t1: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) < t0) lo = mid + 1;
    else hi = mid;
  }
  let n = 0;
  for (let i = lo; i < times.length && (times[i] as number) < t1; i++) n++;
  return n;
}

/** Run time of several tids in [t0, t1], ns. */
export function runOf(trace: SchedTrace, tids: readonly number[], t0: number, t1: number): number {
  let ns = 0;
  for (const tid of tids) {
    const list = trace.segments.get(tid) ?? [];
    for (let i = firstEndingAfter(list, t0); i < list.length; i++) {
      const seg = list[i] as Segment;
      if (seg.start >= t1) break;
      if (seg.state === 'run') ns += overlap(seg.start, seg.end, t0, t1);
    }
  }
  return ns;
}

const IDLE_BUCKETS_US = [20, 50, 100, 200, 500, 1000, 2000, 5000];

/** Wake-ups onto an idle core by how long it had idled: count, median and p90 of the wake's latency (µs), per core. */
export function idleWakeTable(wakes: readonly IdleWake[]): string {
  const lines = ['| core | idle before the wake-up | wake-ups | latency p50 µs | p90 µs | max µs |', '| --- | --- | --- | --- | --- | --- |'];
  for (const cpu of [...new Set(wakes.map((w) => w.cpu))].sort()) {
    let lower = 0;
    for (const upper of [...IDLE_BUCKETS_US, Number.POSITIVE_INFINITY]) {
      const inBucket = wakes.filter((w) => w.cpu === cpu && w.idleBeforeNs >= lower * 1000 && w.idleBeforeNs < upper * 1000).map((w) => w.latencyNs).sort((a, b) => a - b);
      if (inBucket.length > 0) {
        const at = (q: number): number => Math.round((inBucket[Math.min(inBucket.length - 1, Math.floor(q * inBucket.length))] as number) / 100) / 10;
        lines.push(`| ${cpu} | ${lower}-${upper === Number.POSITIVE_INFINITY ? '' : upper} µs | ${inBucket.length} | ${at(0.5)} | ${at(0.9)} | ${at(1)} |`);
      }
      lower = upper;
    }
  }
  return lines.join('\n');
}
