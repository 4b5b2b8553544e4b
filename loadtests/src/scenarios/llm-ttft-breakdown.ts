/**
 * Where probes' time to first token went (issue 21, fifth pass): each probe (client start and first piece,
 * epoch ms) matched to the engine's first-token trace of its request (first-token-trace.ts; the probe's
 * max_tokens sets it apart from the background's, and its trace is the first sent after the probe started),
 * its TTFT cut into: before sending (the instance's parsing), the model run in flight (by kind), message
 * delivery to the engine thread, runs queued ahead of its prefill, its own prefill, and delivery of the first
 * token back (event message, response). Reported for all probes and for the slowest tenth (what sets p99).
 */
import type { FirstTokenTrace } from '../../../gpu-node/src/backends/onnxruntime-llm/first-token-trace.js';

export interface ProbeTiming {
  readonly startAtMs: number;
  readonly firstAtMs: number;
  readonly ttftMs: number;
}

interface Parts {
  ttftMs: number;
  beforeSendMs: number;
  inFlightMs: number;
  messageMs: number;
  queuedMs: number;
  prefillMs: number;
  deliveryMs: number;
  /**
   * The same TTFT with the engine's runs at their on-CPU time (the run in flight's rest scaled by its CPU share,
   * its own prefill's CPU time): what it would have been had the engine thread had core 0 to itself (needs
   * TESSERA_LLM_TRACE_CPU=1; NaN otherwise).
   */
  ownCoreTtftMs: number;
}

const PART_KEYS: readonly (keyof Parts)[] = ['ttftMs', 'beforeSendMs', 'inFlightMs', 'messageMs', 'queuedMs', 'prefillMs', 'deliveryMs', 'ownCoreTtftMs'];

function mean(rows: readonly Parts[]): Parts {
  const out = Object.fromEntries(PART_KEYS.map((k) => [k, 0])) as unknown as Parts;
  for (const row of rows) for (const k of PART_KEYS) out[k] += row[k] / rows.length;
  for (const k of PART_KEYS) out[k] = Math.round(out[k] * 100) / 100;
  return out;
}

export function breakdownOf(timings: readonly ProbeTiming[], traces: readonly FirstTokenTrace[], probeTokens: number): object {
  const mine = traces.filter((t) => t.maxTokens === probeTokens).sort((a, b) => a.sentAtMs - b.sentAtMs);
  const rows: (Parts & { inFlight: string; queuedRuns: string })[] = [];
  let from = 0;
  for (const probe of timings) {
    while (from < mine.length && (mine[from] as FirstTokenTrace).sentAtMs < probe.startAtMs) from += 1;
    const trace = mine[from];
    if (trace === undefined || trace.sentAtMs > probe.firstAtMs) continue;
    from += 1;
    rows.push({
      ttftMs: probe.ttftMs,
      beforeSendMs: trace.sentAtMs - probe.startAtMs,
      inFlightMs: trace.inFlightMs,
      messageMs: trace.messageMs,
      queuedMs: trace.queuedMs,
      prefillMs: trace.prefillMs,
      deliveryMs: probe.firstAtMs - trace.firstTokenAtMs,
      ownCoreTtftMs:
        trace.sentAtMs - probe.startAtMs + (trace.inFlight === 'none' ? 0 : trace.inFlightMs * Math.min(1, trace.inFlightCpuShare)) + trace.messageMs + trace.queuedMs + trace.prefillCpuMs + probe.firstAtMs - trace.firstTokenAtMs,
      inFlight: trace.inFlight,
      queuedRuns: `d${trace.queuedRuns.decode}/p${trace.queuedRuns.prefill}/c${trace.queuedRuns.chunk}`,
    });
  }
  const slowest = [...rows].sort((a, b) => b.ttftMs - a.ttftMs).slice(0, Math.max(1, Math.ceil(rows.length / 10)));
  const byKind = (list: typeof rows) => {
    const counts: Record<string, { probes: number; meanInFlightMs: number }> = {};
    for (const r of list) {
      const c = (counts[r.inFlight] ??= { probes: 0, meanInFlightMs: 0 });
      c.meanInFlightMs += r.inFlightMs;
      c.probes += 1;
    }
    for (const c of Object.values(counts)) c.meanInFlightMs = Math.round((c.meanInFlightMs / c.probes) * 100) / 100;
    return counts;
  };
  const ownCore = rows.map((r) => r.ownCoreTtftMs).sort((a, b) => a - b);
  const at = (p: number) => ownCore[Math.max(0, Math.ceil((p / 100) * ownCore.length) - 1)];
  return {
    matched: rows.length,
    ownCoreTtftMs: { p50: at(50), p90: at(90), p99: at(99) },
    of: timings.length,
    meanMs: rows.length > 0 ? mean(rows) : undefined,
    inFlightByKind: byKind(rows),
    slowestTenthMeanMs: rows.length > 0 ? mean(slowest) : undefined,
    slowestTenthInFlightByKind: byKind(slowest),
    slowest: slowest.slice(0, 5).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 10) / 10 : v]))),
  };
}
