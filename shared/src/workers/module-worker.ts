/**
 * Starting a worker thread on a module that may be TypeScript source. Node 20 ignores `--import tsx` in
 * a Worker's execArgv, so a `.ts` entry is started through tsx-bootstrap.mjs, which registers tsx in
 * the new thread and then imports the entry named by `workerData.entry`. Compiled `.js` entries start
 * directly. Either way the thread's `workerData` must carry `entry` (the entry's `file:` URL); the rest
 * of `workerData` is the module's own.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export const TSX_BOOTSTRAP = new URL('./tsx-bootstrap.mjs', import.meta.url);

/** The script a Worker must run for `entry`: the tsx bootstrap for TypeScript source, else the entry. */
export function workerScriptFor(entry: URL): URL {
  return entry.pathname.endsWith('.ts') ? TSX_BOOTSTRAP : entry;
}

/** A Worker running `entry` with `data` as its workerData (plus `entry`, which the bootstrap reads). */
export function startModuleWorker<Data extends object>(
  entry: URL,
  data: Data,
  options: Omit<WorkerOptions, 'workerData' | 'eval'> = {},
): Worker {
  return new Worker(workerScriptFor(entry), { ...options, workerData: { ...data, entry: entry.href } });
}
