/**
 * Pinning for per-core measurement: the process under test alone on core 0, everything else on core 1, so a
 * figure depends on one core's speed rather than on what else the 2-core box happens to run.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export type PerCoreSupport = { readonly ok: true } | { readonly ok: false; readonly why: string };

let cached: PerCoreSupport | undefined;

/** Whether `taskset` exists and there are two cores to split; `why` is a one-line note for the report. */
export function perCoreSupport(): PerCoreSupport {
  cached ??= probe();
  return cached;
}

function probe(): PerCoreSupport {
  if (process.platform !== 'linux') return { ok: false, why: `per-core figures need Linux (this is ${process.platform})` };
  if (availableParallelism() < 2) return { ok: false, why: 'per-core figures need two cores (one for the process under test, one for the rest)' };
  const found = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  if (found.error !== undefined || found.status !== 0) return { ok: false, why: 'per-core figures need `taskset` (util-linux), which is missing' };
  return { ok: true };
}

/** `[command, args]` that runs `command` on `core` when pinning is possible, and unpinned otherwise. */
export function pinnedCommand(core: number, command: string, args: readonly string[]): [string, string[]] {
  if (!perCoreSupport().ok) return [command, [...args]];
  return ['taskset', ['-c', String(core), command, ...args]];
}

/** Pins an already running process (all its threads, present and future) to `core`; false when impossible. */
export function pinProcess(pid: number, core: number): boolean {
  if (!perCoreSupport().ok) return false;
  const result = spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
  return result.status === 0;
}
