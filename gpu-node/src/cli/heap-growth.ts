/**
 * The main isolate's old-generation headroom (`--heap-growing-percent`, issue 18). Under a batching load
 * the node promotes a few KB of request objects per inference into old space, and V8 sets the next
 * mark-compact's limit at about twice the node's small live heap (~20 MB) and starts concurrent marking
 * well before it (at 20-25 MB of 42-50): a mark-compact every ~1,000 inferences, each ~40 ms of marking
 * and sweeping on V8's helper threads. The factor is process-wide: worker isolates get it too. A fixed growing factor lets the old generation reach
 * (1 + percent/100) times its live size first: fewer mark-compacts for tens of MB of heap. External
 * memory (ArrayBuffers) keeps its own trigger in V8, so the node's memory stays bounded either way.
 */
import { setFlagsFromString } from 'node:v8';

/** Old space may grow to 4x its live size before a mark-compact: V8's own largest factor, held fixed. */
export const DEFAULT_HEAP_GROWING_PERCENT = 300;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/** True when node was started with V8's own `--heap-growing-percent` (command line or NODE_OPTIONS): that one stands. */
export function heapGrowingFlagGiven(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => FLAG.test(arg));
}

/**
 * Sets V8's heap growing factor for this process (read by V8 at every mark-compact, so setting it after
 * start takes effect from the next one). 0 leaves V8's own adaptive factor. Returns whether it was set.
 */
export function applyHeapGrowingPercent(
  percent: number,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  if (percent <= 0 || heapGrowingFlagGiven(execArgv, nodeOptions)) return false;
  setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
  return true;
}
