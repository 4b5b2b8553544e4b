/**
 * Lowers the scheduling priority (raises `nice`) of every thread of this process but the main one, once
 * at start: V8's platform workers (concurrent marking, parallel scavenging, sweeping, TurboFan) and the
 * threads Node started with them. Why: on a core of its own the gateway's event loop is runnable for most
 * of a request, and the scheduler's trace (docs/benchmarks.md, "the kernel's view", issue 17) shows those
 * workers taking the core from it in the slowest requests; at nice 19 against the loop's 0 they run in the
 * loop's idle time instead (waiting for a node), and still run at once whenever the loop sleeps. Threads
 * created later by the main thread (libuv's pool, worker_threads) inherit its priority, not theirs.
 * Linux only (setpriority on a thread id); elsewhere, or with `nice` 0, it does nothing.
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The `nice` the gateway gives its helper threads unless TESSERA_HELPER_THREAD_NICE says otherwise. */
export const DEFAULT_HELPER_THREAD_NICE = 19;

/** Parses TESSERA_HELPER_THREAD_NICE: an integer 0-19 (0 leaves the threads as they are). */
export function helperThreadNice(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_HELPER_THREAD_NICE;
  const nice = Number(value);
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`TESSERA_HELPER_THREAD_NICE must be an integer from 0 to 19, got '${value}'`);
  return nice;
}

/** Sets `nice` on every thread of this process but the main one; returns how many threads it changed. */
export function lowerHelperThreadPriority(nice: number): number {
  if (process.platform !== 'linux' || nice === 0) return 0;
  let changed = 0;
  for (const entry of readdirSync('/proc/self/task')) {
    const tid = Number(entry);
    if (tid === process.pid) continue;
    try {
      setPriority(tid, nice);
      changed++;
    } catch {
      // A thread that ended since the listing, or a sandbox that refuses: the gateway runs as before.
    }
  }
  return changed;
}
