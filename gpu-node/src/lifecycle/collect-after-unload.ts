/**
 * Unload gives memory back (issue 19). An unloaded version's JavaScript side (config, scheduler, instance
 * records, their closures) is garbage at once, but V8 collects its old space only under allocation
 * pressure: a node that loads and unloads models between light traffic grows cycle after cycle until
 * then. One full collection a short while after the last unload of a burst returns it, as Triton's C++
 * frees a model's memory on unload; a burst of 100 unloads costs one collection, not 100.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long after the last unload the collection waits (an unload burst ends first). */
export const UNLOAD_QUIET_MS = 1000;
/** The longest a collection waits after the first unload it covers: unloads that never pause still get one. */
export const UNLOAD_MAX_WAIT_MS = 3000;

export class CollectAfterQuiet {
  private timer: NodeJS.Timeout | undefined;
  /** When the first unload not yet collected finished. */
  private pendingSince: number | undefined;

  constructor(
    private readonly collect: () => void,
    private readonly quietMs = UNLOAD_QUIET_MS,
    private readonly maxWaitMs = UNLOAD_MAX_WAIT_MS,
  ) {}

  /** Another unload finished: collect once nothing more unloaded for `quietMs`, or `maxWaitMs` after the first. */
  schedule(): void {
    const now = Date.now();
    this.pendingSince ??= now;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.quietMs, this.pendingSince + this.maxWaitMs - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pendingSince = undefined;
      this.collect();
    }, wait);
    // A pending collection never keeps the process alive.
    this.timer.unref();
  }
}

/** V8's full collection: the global `gc` when the process runs with --expose-gc, else the same function exposed now. */
function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    // A runtime without the flag: V8 collects on its own schedule, as before.
    return () => undefined;
  }
}

let processCollector: CollectAfterQuiet | undefined;

/** The process's collector (collections are process-wide, so one debounce for every model). */
export function collectAfterUnload(): void {
  processCollector ??= new CollectAfterQuiet(fullCollection());
  processCollector.schedule();
}
