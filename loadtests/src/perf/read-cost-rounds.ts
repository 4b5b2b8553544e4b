/**
 * Readers of one message timed in turns, for the read-cost scripts (infer-request-read-cost.ts,
 * infer-response-read-cost.ts): per round, each contender warmed, then `CALLS` reads timed; µs per read
 * and bytes allocated per read (heap growth in a window with no collection inside: run with a large
 * semi-space, or the window's bytes are left out). Needs `--expose-gc`. ROUNDS and CALLS from the env.
 */
import { PerformanceObserver } from 'node:perf_hooks';

export type ReadContender = readonly [label: string, read: (bytes: Buffer) => unknown];

export function runReadCostRounds(contenders: readonly ReadContender[], bytes: Buffer, unit: string): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  let collections = 0;
  const observer = new PerformanceObserver((list) => void (collections += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  const rounds = Number(process.env.ROUNDS ?? 5);
  const calls = Number(process.env.CALLS ?? 20000);
  const results = new Map<string, { us: number[]; bytes: number[] }>();
  // Reads kept alive for the window, so what they allocate shows as heap growth.
  const keep: unknown[] = new Array(calls);
  for (let round = 0; round < rounds; round++) {
    for (const [label, read] of contenders) {
      for (let i = 0; i < 2000; i++) read(bytes); // warm
      gc();
      const before = collections;
      const heap0 = process.memoryUsage().heapUsed;
      const t = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) keep[i] = read(bytes);
      const us = Number(process.hrtime.bigint() - t) / calls / 1000;
      const perCall = (process.memoryUsage().heapUsed - heap0) / calls;
      const entry = results.get(label) ?? { us: [], bytes: [] };
      entry.us.push(us);
      if (collections === before) entry.bytes.push(perCall);
      results.set(label, entry);
      console.log(round, label, us.toFixed(3), 'µs', collections === before ? `${perCall.toFixed(0)} bytes` : '(collection inside: bytes left out)');
      keep.fill(undefined);
    }
  }
  observer.disconnect();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  for (const [label, { us, bytes: b }] of results) console.log(`${label}: median ${median(us).toFixed(3)} µs, ${median(b).toFixed(0)} bytes per ${unit} (${b.length} clean windows)`);
}
