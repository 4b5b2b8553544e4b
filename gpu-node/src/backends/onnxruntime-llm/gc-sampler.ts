/**
 * Per-isolate garbage-collection samples for the benches (issue 21, sixth pass): with TESSERA_LLM_GC_LOG=FILE
 * each isolate that starts a sampler (the node's main thread, each engine thread) appends one JSON line a
 * second to FILE: its heap statistics (external memory included: ArrayBuffers count there and drive
 * mark-compacts) and the GC entries it saw in that second, by kind. The platform's GC helper threads are
 * shared by all isolates of the process; only samples taken inside each isolate say whose heap they work for.
 */
import { appendFileSync } from 'node:fs';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

const LOG = process.env['TESSERA_LLM_GC_LOG'];
const SAMPLE_MS = 1000;

const KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

let started = false;

/** Starts sampling this isolate when TESSERA_LLM_GC_LOG names a file (once per isolate); a no-op otherwise. */
export function startGcSampler(label: string, extra: () => object = () => ({})): void {
  if (LOG === undefined || LOG === '' || started) return;
  started = true;
  const counts: Record<string, { n: number; ms: number }> = {};
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) count(counts, entry);
  });
  observer.observe({ entryTypes: ['gc'] });
  const timer = setInterval(() => {
    const heap = getHeapStatistics();
    const line = {
      atMs: Math.round(performance.timeOrigin + performance.now()),
      label,
      threadId,
      usedMiB: mib(heap.used_heap_size),
      totalMiB: mib(heap.total_heap_size),
      externalMiB: mib(heap.external_memory),
      mallocedMiB: mib(heap.malloced_memory),
      spacesMiB: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name.replace('_space', ''), mib(s.space_used_size)])),
      gc: { ...counts },
      ...extra(),
    };
    for (const key of Object.keys(counts)) delete counts[key];
    try {
      appendFileSync(LOG, `${JSON.stringify(line)}\n`);
    } catch {
      // A bench's diagnostic: a write that fails costs only the sample.
    }
  }, SAMPLE_MS);
  timer.unref();
}

function count(counts: Record<string, { n: number; ms: number }>, entry: PerformanceEntry): void {
  const detail = (entry as { detail?: { kind?: number; flags?: number } }).detail;
  // The flags say why a collection ran (e.g. all external memory: ArrayBuffer pressure), when V8 says.
  const flags = detail?.flags ?? 0;
  const kind = `${KINDS[detail?.kind ?? -1] ?? 'other'}${flags === 0 ? '' : `/${flags}`}`;
  const slot = (counts[kind] ??= { n: 0, ms: 0 });
  slot.n += 1;
  slot.ms = Math.round((slot.ms + entry.duration) * 100) / 100;
}

function mib(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}
