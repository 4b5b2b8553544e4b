/**
 * What each thread of a server did over a window, for gateway-wake-account.ts: CPU, wake-ups and context
 * switches from /proc (schedstat and status, per thread), and system calls by kind and thread from the
 * text of `strace -f -qq -o FILE -p PID`. Pure parsing and arithmetic here; the scenario reads the files.
 *
 * Roles on Node 20 (every thread is called "node"): the main thread's id is the pid; the others are
 * named by their rank in creation order, which Node's start-up fixes (node_platform.cc starts the
 * platform's delayed-task thread, then its four workers; then the inspector's signal thread, the one
 * with a small stack in `strace -e clone3` on node 20.20; then libuv's four pool threads). Threads past
 * those ten are "other".
 */

export interface ThreadSched {
  readonly tid: number;
  /** schedstat: ns on the CPU, ns runnable but waiting, times it got the CPU (timeslices). */
  readonly runNs: number;
  readonly waitNs: number;
  readonly slices: number;
  /** status: context switches the thread asked for (it slept) and those forced on it. */
  readonly voluntary: number;
  readonly nonvoluntary: number;
}

export function parseSchedstat(tid: number, schedstat: string, status: string): ThreadSched {
  const [run, wait, slices] = schedstat.trim().split(/\s+/).map(Number);
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { tid, runNs: run ?? 0, waitNs: wait ?? 0, slices: slices ?? 0, voluntary: field('voluntary_ctxt_switches'), nonvoluntary: field('nonvoluntary_ctxt_switches') };
}

const NODE_ROLES = ['V8 delayed tasks', 'V8 worker', 'V8 worker', 'V8 worker', 'V8 worker', 'inspector signal', 'libuv pool', 'libuv pool', 'libuv pool', 'libuv pool'];

/** Role of each tid of a Node process: `main` for the pid, else by creation rank (see the file's comment). */
export function nodeThreadRoles(pid: number, tids: readonly number[]): Map<number, string> {
  const others = tids.filter((tid) => tid !== pid).sort((a, b) => a - b);
  const roles = new Map<number, string>([[pid, 'main']]);
  others.forEach((tid, i) => roles.set(tid, NODE_ROLES[i] ?? 'other'));
  return roles;
}

export interface RoleDelta {
  readonly threads: number;
  readonly cpuUs: number;
  readonly waitUs: number;
  readonly slices: number;
  readonly voluntary: number;
  readonly nonvoluntary: number;
}

/** Deltas between two readings, summed by role; a thread born in between counts from zero. */
export function deltaByRole(before: readonly ThreadSched[], after: readonly ThreadSched[], roleOf: (tid: number) => string): Record<string, RoleDelta> {
  const start = new Map(before.map((t) => [t.tid, t]));
  const out: Record<string, { threads: number; cpuUs: number; waitUs: number; slices: number; voluntary: number; nonvoluntary: number }> = {};
  for (const t of after) {
    const b = start.get(t.tid);
    const role = roleOf(t.tid);
    const r = (out[role] ??= { threads: 0, cpuUs: 0, waitUs: 0, slices: 0, voluntary: 0, nonvoluntary: 0 });
    r.threads += 1;
    r.cpuUs += (t.runNs - (b?.runNs ?? 0)) / 1000;
    r.waitUs += (t.waitNs - (b?.waitNs ?? 0)) / 1000;
    r.slices += t.slices - (b?.slices ?? 0);
    r.voluntary += t.voluntary - (b?.voluntary ?? 0);
    r.nonvoluntary += t.nonvoluntary - (b?.nonvoluntary ?? 0);
  }
  return out;
}

/** System calls counted from `strace -f` text: by thread id, by call name. */
export type SyscallCounts = Map<number, Map<string, number>>;

// "1234 epoll_wait(...) = 1", "1234 read(...) <unfinished ...>"; a resumed call was counted when it began.
const CALL = /^(\d+)\s+(?:\d+(?:\.\d+)?\s+)?([a-z_0-9]+)\(/;

export function countSyscalls(text: string): SyscallCounts {
  const counts: SyscallCounts = new Map();
  for (const line of text.split('\n')) {
    const m = CALL.exec(line);
    if (m === null) continue;
    const tid = Number(m[1]);
    let byName = counts.get(tid);
    if (byName === undefined) counts.set(tid, (byName = new Map()));
    byName.set(m[2]!, (byName.get(m[2]!) ?? 0) + 1);
  }
  return counts;
}

/** Calls per unit (request, or second when idle), by role and call name, rounded to 0.01. */
export function syscallsPerUnit(counts: SyscallCounts, roleOf: (tid: number) => string, units: number): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [tid, byName] of counts) {
    const role = (out[roleOf(tid)] ??= {});
    for (const [name, n] of byName) role[name] = (role[name] ?? 0) + n;
  }
  for (const role of Object.values(out)) {
    for (const name of Object.keys(role)) role[name] = Math.round((role[name]! / units) * 100) / 100;
  }
  return out;
}
