/**
 * CPU time a process has used (user + system), from Linux's /proc/<pid>/stat, so a bench can report a
 * server's CPU cost per request. Unlike throughput, CPU per request barely depends on what else runs on
 * the machine (it grows somewhat with cache and scheduler contention), so it is a useful second figure
 * on a shared box. Elsewhere (no /proc) it is NaN and the reports show "-".
 */
import { readFile } from 'node:fs/promises';

/** Clock ticks per second of utime/stime: `getconf CLK_TCK`, 100 on Linux for x86-64 and arm64. */
const CLK_TCK = 100;

/** Seconds of CPU used by `pid` so far, or NaN when it cannot be read. */
export function processCpuSeconds(pid: number): Promise<number> {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * Seconds of CPU used by one thread of `pid` so far (NaN when unreadable). A process's main thread
 * has the process's id: `threadCpuSeconds(pid, pid)` is the event loop of a Node process, without
 * its worker pools (onnxruntime's intra-op threads, libuv, the GC's helpers).
 */
export function threadCpuSeconds(pid: number, tid: number): Promise<number> {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`);
}

async function statCpuSeconds(path: string): Promise<number> {
  try {
    const stat = await readFile(path, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: fields are counted after it.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Microseconds of CPU per request between two readings; NaN without requests or readings. */
export function cpuUsPerRequest(beforeS: number, afterS: number, requests: number): number {
  return requests > 0 ? ((afterS - beforeS) * 1e6) / requests : Number.NaN;
}
