/**
 * CPU time per thread of a process, from /proc/<pid>/task/<tid>/stat, split into the roles a per-core report
 * names. On Node 20 every thread is called "node", so roles come from what is known: the main thread's id is
 * the process id (the event loop), and a caller may name other threads (a worker that reported its own id with
 * `currentThreadId()`); the rest are grouped as helpers (V8's platform threads, GC, libuv's pool).
 */
import { readdir, readFile } from 'node:fs/promises';
import { readlinkSync } from 'node:fs';

/** Clock ticks per second of utime/stime (`getconf CLK_TCK`): 100 on Linux for x86-64 and arm64. */
const CLK_TCK = 100;

export interface ThreadCpu {
  readonly tid: number;
  readonly name: string;
  readonly cpuSeconds: number;
}

/** A role per thread id, for threads the caller can name (e.g. `onnxruntime`, `worker`). */
export type ThreadRoles = ReadonlyMap<number, 'onnxruntime' | 'worker'>;

export interface CpuSplit {
  readonly totalUs: number;
  readonly eventLoopUs: number;
  readonly onnxruntimeUs: number;
  readonly workersUs: number;
  /** Threads nobody named: V8 platform and GC threads, libuv's pool, onnxruntime's own pools when unnamed. */
  readonly helpersUs: number;
  /** Every thread's share, keyed `name/tid`, for the busiest-thread table of a report. */
  readonly byThread: Readonly<Record<string, number>>;
}

/** The id of the calling thread (main or worker), so a worker can tell a bench which tid is its own. */
export function currentThreadId(): number | undefined {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    return Number(link.slice(link.lastIndexOf('/') + 1));
  } catch {
    return undefined;
  }
}

/** Every thread of `pid` with its CPU so far; empty when /proc cannot be read (not Linux, process gone). */
export async function readThreadCpu(pid: number): Promise<ThreadCpu[]> {
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const threads = await Promise.all(tids.map((tid) => readOneThread(pid, Number(tid))));
  return threads.filter((thread): thread is ThreadCpu => thread !== undefined);
}

async function readOneThread(pid: number, tid: number): Promise<ThreadCpu | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return parseThreadStat(tid, stat);
  } catch {
    return undefined; // the thread ended between readdir and read
  }
}

/** One line of /proc/.../stat: the name sits in parentheses and may hold spaces, so fields count after it. */
export function parseThreadStat(tid: number, stat: string): ThreadCpu {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const rest = stat.slice(close + 2).split(' ');
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  return { tid, name: stat.slice(open + 1, close), cpuSeconds: (Number(rest[11]) + Number(rest[12])) / CLK_TCK };
}

/** CPU used between two readings of the same process, split by role; threads born in between count whole. */
export function threadCpuDelta(
  before: readonly ThreadCpu[],
  after: readonly ThreadCpu[],
  pid: number,
  roles: ThreadRoles = new Map(),
): CpuSplit {
  const start = new Map(before.map((thread) => [thread.tid, thread.cpuSeconds]));
  let eventLoopUs = 0;
  let onnxruntimeUs = 0;
  let workersUs = 0;
  let helpersUs = 0;
  const byThread: Record<string, number> = {};
  for (const thread of after) {
    const us = (thread.cpuSeconds - (start.get(thread.tid) ?? 0)) * 1e6;
    if (us <= 0) continue;
    byThread[`${thread.name}/${thread.tid}`] = us;
    const role = thread.tid === pid ? 'main' : roles.get(thread.tid);
    if (role === 'main') eventLoopUs += us;
    else if (role === 'onnxruntime') onnxruntimeUs += us;
    else if (role === 'worker') workersUs += us;
    else helpersUs += us;
  }
  const totalUs = eventLoopUs + onnxruntimeUs + workersUs + helpersUs;
  return { totalUs, eventLoopUs, onnxruntimeUs, workersUs, helpersUs, byThread };
}

/** The same split per request, inference or token; NaN everywhere when `count` is not positive. */
export function perUnit(split: CpuSplit, count: number): CpuSplit {
  const per = (us: number): number => (count > 0 ? us / count : Number.NaN);
  const byThread: Record<string, number> = {};
  for (const [key, us] of Object.entries(split.byThread)) byThread[key] = per(us);
  return {
    totalUs: per(split.totalUs),
    eventLoopUs: per(split.eventLoopUs),
    onnxruntimeUs: per(split.onnxruntimeUs),
    workersUs: per(split.workersUs),
    helpersUs: per(split.helpersUs),
    byThread,
  };
}
