/**
 * Where each request's time to first token goes inside the engine (issue 21, fifth pass): the model run in
 * flight when its message was sent (the engine thread runs models synchronously, so a newcomer's message is
 * only read once that run ends), the runs taken before its own prefill (queued work), and its own prefill
 * run. The last TRACE_KEEP requests' traces are kept for the benches (EngineStats.recentFirstTokens); times
 * are epoch milliseconds (performance.timeOrigin + now), comparable between the node's threads.
 */
import { readFileSync } from 'node:fs';
import { TraceRing, type FirstTokenTrace, type RunKind } from './trace-ring.js';

export type { FirstTokenTrace, RunKind } from './trace-ring.js';

/**
 * TESSERA_LLM_TRACE_CPU=1 (benches only: a file read per run): each run's on-CPU time of the engine thread from
 * /proc/thread-self/schedstat (ns), so a bench on a shared core can tell a long run from a starved one.
 */
const TRACE_CPU = process.env['TESSERA_LLM_TRACE_CPU'] === '1';

function threadCpuMs(): number {
  if (!TRACE_CPU) return Number.NaN;
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Traces kept (a ring): enough for a bench window's probes beside a wave's members. */
export const TRACE_KEEP = 2048;

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** What the tracer keeps of one request between its arrival and its first token. */
export interface ArrivalMark {
  readonly sentAtMs: number;
  receivedAtMs: number;
  readonly inFlight: RunKind | 'none';
  inFlightMs: number;
  inFlightCpuShare: number;
  messageMs: number;
  readonly runsAtArrival: Readonly<Record<RunKind, number>>;
  prefillStartMs?: number;
  prefillStartCpuMs?: number;
  runsAtPrefill?: Readonly<Record<RunKind, number>>;
}

/** A model run's times (reused: the engine starts a few hundred runs a second, so none allocates). */
interface Run {
  kind: RunKind;
  startMs: number;
  startCpuMs: number;
  endMs: number;
  cpuShare: number;
}

export class FirstTokenTracer {
  private readonly lastRun: Run = { kind: 'decode', startMs: 0, startCpuMs: 0, endMs: 0, cpuShare: Number.NaN };
  private hasLastRun = false;
  private readonly current: Run = { kind: 'decode', startMs: 0, startCpuMs: 0, endMs: 0, cpuShare: Number.NaN };
  private running = false;
  private readonly started: Record<RunKind, number> = { decode: 0, prefill: 0, chunk: 0 };
  private readonly traces = new TraceRing(TRACE_KEEP);
  /** Requests read while a run was under way (an asynchronous runner): their wait ends with that run. */
  private readonly readDuringRun: ArrivalMark[] = [];

  runStarted(kind: RunKind): void {
    this.started[kind] += 1;
    this.current.kind = kind;
    this.current.startMs = nowMs();
    this.current.startCpuMs = threadCpuMs();
    this.running = true;
  }

  runEnded(): void {
    const endMs = nowMs();
    if (this.running) {
      const run = this.current;
      const last = this.lastRun;
      last.kind = run.kind;
      last.startMs = run.startMs;
      last.startCpuMs = run.startCpuMs;
      last.endMs = endMs;
      last.cpuShare = (threadCpuMs() - run.startCpuMs) / (endMs - run.startMs);
      this.hasLastRun = true;
    }
    this.running = false;
    if (this.readDuringRun.length === 0) return;
    for (const mark of this.readDuringRun) {
      mark.inFlightMs = endMs - mark.sentAtMs;
      mark.inFlightCpuShare = this.hasLastRun ? this.lastRun.cpuShare : Number.NaN;
      mark.messageMs = 0;
      mark.receivedAtMs = endMs;
    }
    this.readDuringRun.length = 0;
  }

  /** A request read by the engine; `sentAtMs` from the sending thread (the reading time when absent). */
  arrived(sentAtMs: number | undefined): ArrivalMark {
    const receivedAtMs = nowMs();
    const sent = sentAtMs ?? receivedAtMs;
    const runsAtArrival = { ...this.started };
    if (this.running) {
      const mark = { sentAtMs: sent, receivedAtMs, inFlight: this.current.kind, inFlightMs: 0, inFlightCpuShare: Number.NaN, messageMs: 0, runsAtArrival };
      this.readDuringRun.push(mark);
      return mark;
    }
    const run = this.lastRun;
    const waited = this.hasLastRun && run.endMs > sent;
    return {
      sentAtMs: sent,
      receivedAtMs,
      inFlight: waited ? run.kind : 'none',
      inFlightMs: waited ? run.endMs - sent : 0,
      inFlightCpuShare: waited ? run.cpuShare : Number.NaN,
      messageMs: receivedAtMs - (waited ? run.endMs : sent),
      runsAtArrival,
    };
  }

  /** Called before the request's own (first) prefill run starts. */
  prefillStarting(mark: ArrivalMark): void {
    mark.prefillStartMs = nowMs();
    mark.prefillStartCpuMs = threadCpuMs();
    mark.runsAtPrefill = { ...this.started };
  }

  firstToken(id: number, promptTokens: number, maxTokens: number, mark: ArrivalMark, rows: number, paddedTokens: number): void {
    const at = nowMs();
    const start = mark.prefillStartMs ?? at;
    const before = mark.runsAtPrefill ?? this.started;
    const queuedRuns = { decode: 0, prefill: 0, chunk: 0 };
    for (const kind of Object.keys(queuedRuns) as RunKind[]) queuedRuns[kind] = before[kind] - mark.runsAtArrival[kind];
    this.traces.push({
      id,
      promptTokens,
      maxTokens,
      inFlight: mark.inFlight,
      inFlightMs: mark.inFlightMs,
      inFlightCpuShare: mark.inFlightCpuShare,
      messageMs: mark.messageMs,
      queuedMs: start - mark.receivedAtMs,
      queuedRuns,
      prefillMs: at - start,
      prefillCpuMs: threadCpuMs() - (mark.prefillStartCpuMs ?? Number.NaN),
      prefillRows: rows,
      prefillPaddedTokens: paddedTokens,
      sentAtMs: mark.sentAtMs,
      firstTokenAtMs: at,
    });
  }

  recent(): FirstTokenTrace[] {
    return this.traces.toArray();
  }
}
