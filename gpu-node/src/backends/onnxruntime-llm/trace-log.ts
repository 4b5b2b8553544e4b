/**
 * TESSERA_LLM_TRACE_LOG=FILE (benches only): each engine thread appends, once a second, the first-token traces
 * (first-token-trace.ts) of the requests whose first token came since its last write, one JSON line per trace
 * with the model's name. The traces' times are epoch ms, so a bench in another process can match them to its
 * own requests' send and first-token times and split a TTFT into the node's main thread, the engine, and the
 * first token's way back (loadtests/src/scenarios/llm-wave-ttft.ts).
 */
import { appendFileSync } from 'node:fs';
import type { FirstTokenTrace } from './trace-ring.js';

const WRITE_MS = 1000;

/**
 * Appends the traces whose first token came after `afterMs` to `file`; returns the new watermark (the latest
 * first token written, or `afterMs` when none was new).
 */
export function appendTraces(file: string, model: string, traces: readonly FirstTokenTrace[], afterMs: number): number {
  const fresh = traces.filter((t) => t.firstTokenAtMs > afterMs);
  if (fresh.length === 0) return afterMs;
  try {
    appendFileSync(file, fresh.map((t) => `${JSON.stringify({ model, ...t })}\n`).join(''));
  } catch {
    // A bench's diagnostic: a write that fails costs only these lines.
  }
  return Math.max(...fresh.map((t) => t.firstTokenAtMs));
}

/** Starts the writes when `file` (TESSERA_LLM_TRACE_LOG) names one; a no-op otherwise. */
export function startTraceLog(file: string | undefined, model: string, recent: () => readonly FirstTokenTrace[]): void {
  if (file === undefined || file === '') return;
  let writtenUpToMs = 0;
  const timer = setInterval(() => (writtenUpToMs = appendTraces(file, model, recent(), writtenUpToMs)), WRITE_MS);
  timer.unref();
}
