/**
 * Stand-in with the API of main's `loadtests/src/lib/per-core/` (announced for 05:45 UTC, not yet on main
 * when the gateway's per-core bench was written): pinning with taskset and per-thread CPU from /proc.
 * When main's lands, the merge takes main's and this file goes.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

const CLK_TCK = 100;

export function perCoreSupport(): { ok: true } | { ok: false; why: string } {
  if (process.platform !== 'linux') return { ok: false, why: 'per-core figures need Linux (/proc and taskset)' };
  if (availableParallelism() < 2) return { ok: false, why: 'per-core figures need two cores' };
  const probe = spawnSync('taskset', ['-c', '0', 'true']);
  if (probe.error !== undefined || probe.status !== 0) return { ok: false, why: 'taskset is not installed (util-linux)' };
  return { ok: true };
}

export function pinnedCommand(core: number, cmd: string, args: readonly string[]): [string, string[]] {
  return perCoreSupport().ok ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, [...args]];
}

export interface ThreadCpu {
  readonly tid: number;
  readonly name: string;
  readonly cpuSeconds: number;
}

export async function readThreadCpu(pid: number): Promise<ThreadCpu[]> {
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: ThreadCpu[] = [];
  for (const tid of tids) {
    try {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ tid: Number(tid), name, cpuSeconds: (Number(rest[11]) + Number(rest[12])) / CLK_TCK });
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

export interface CpuSplit {
  readonly totalUs: number;
  readonly eventLoopUs: number;
  readonly onnxruntimeUs: number;
  readonly workersUs: number;
  readonly helpersUs: number;
  readonly byName: Readonly<Record<string, number>>;
}

export function threadCpuDelta(before: readonly ThreadCpu[], after: readonly ThreadCpu[], pid: number): CpuSplit {
  const start = new Map(before.map((t) => [t.tid, t.cpuSeconds]));
  const byName: Record<string, number> = {};
  let totalUs = 0;
  let eventLoopUs = 0;
  let onnxruntimeUs = 0;
  let workersUs = 0;
  for (const t of after) {
    const us = (t.cpuSeconds - (start.get(t.tid) ?? 0)) * 1e6;
    totalUs += us;
    byName[t.name] = (byName[t.name] ?? 0) + us;
    if (t.tid === pid) eventLoopUs += us;
    else if (/onnx|ort/i.test(t.name)) onnxruntimeUs += us;
    else if (/worker/i.test(t.name) && !/libuv/i.test(t.name)) workersUs += us;
  }
  return { totalUs, eventLoopUs, onnxruntimeUs, workersUs, helpersUs: totalUs - eventLoopUs - onnxruntimeUs - workersUs, byName };
}

export function perUnit(split: CpuSplit, count: number): CpuSplit {
  const d = count > 0 ? count : Number.NaN;
  const byName = Object.fromEntries(Object.entries(split.byName).map(([k, v]) => [k, v / d]));
  return {
    totalUs: split.totalUs / d,
    eventLoopUs: split.eventLoopUs / d,
    onnxruntimeUs: split.onnxruntimeUs / d,
    workersUs: split.workersUs / d,
    helpersUs: split.helpersUs / d,
    byName,
  };
}
