/**
 * How busy one CPU core was over a window, from /proc/stat: the LLM bench records core 1's (node,
 * engine double, Redis, load generator) at each point, to tell a first-token delay of the gateway on
 * core 0 from queueing on a saturated core 1. Undefined where /proc/stat is not there (not Linux).
 */
import { readFileSync } from 'node:fs';

export interface CoreTicks {
  readonly busy: number;
  readonly total: number;
}

export function readCoreTicks(core: number): CoreTicks | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((l) => l.startsWith(`cpu${core} `));
  if (line === undefined) return undefined;
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal ...: idle and iowait are the core waiting.
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** The share of the window the core was busy (0..1), or undefined. */
export function coreBusyShare(before: CoreTicks | undefined, after: CoreTicks | undefined): number | undefined {
  if (before === undefined || after === undefined || after.total <= before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}
