/**
 * The engine's last first-token traces (first-token-trace.ts) kept in one preallocated Float64Array ring,
 * not as objects. Measured (docs/benchmarks.md, sixth pass): with the traces kept as an array of objects
 * (2,048-4,096 of them, each with its nested run counts, all alive in the old generation), the engine thread's
 * isolate ran 25-35 mark-compacts a second once the ring had filled, against 1-3 with 64 kept; the
 * platform's GC threads then spent 24-45 µs per token beside the engine. A ring of numbers holds no
 * per-request object past its first token; objects are built only when a bench asks (`recent`).
 */
export type RunKind = 'decode' | 'prefill' | 'chunk';

/** One request's first-token breakdown (first-token-trace.ts measures it). */
export interface FirstTokenTrace {
  readonly id: number;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** The kind of model run under way when the request was sent, or 'none' (the engine thread was free). */
  readonly inFlight: RunKind | 'none';
  /** From the request's sending to the end of that run (0 for 'none'). */
  readonly inFlightMs: number;
  /** That run's on-CPU share (thread CPU / wall; NaN unless TESSERA_LLM_TRACE_CPU=1): below 1 the core was shared. */
  readonly inFlightCpuShare: number;
  /** From the end of that run (or the sending) to the engine reading the request (message delivery, tokenizing). */
  readonly messageMs: number;
  /** From reading the request to the start of its own prefill run, and the runs started meanwhile, by kind. */
  readonly queuedMs: number;
  readonly queuedRuns: Readonly<Record<RunKind, number>>;
  /** Its own prefill run (for a chunked prompt: from its first chunk's start to its last chunk's end), its rows and padded tokens. */
  readonly prefillMs: number;
  /** The engine thread's CPU time over the same span (NaN unless TESSERA_LLM_TRACE_CPU=1). */
  readonly prefillCpuMs: number;
  readonly prefillRows: number;
  readonly prefillPaddedTokens: number;
  /** When the request was sent and when its first token was sampled (epoch ms): the rest of its TTFT is delivery. */
  readonly sentAtMs: number;
  readonly firstTokenAtMs: number;
}

const KINDS: readonly (RunKind | 'none')[] = ['none', 'decode', 'prefill', 'chunk'];

/** Columns of one record, in order. */
const FIELDS = [
  'id', 'promptTokens', 'maxTokens', 'inFlight', 'inFlightMs', 'inFlightCpuShare', 'messageMs', 'queuedMs',
  'queuedDecode', 'queuedPrefill', 'queuedChunk', 'prefillMs', 'prefillCpuMs', 'prefillRows', 'prefillPaddedTokens',
  'sentAtMs', 'firstTokenAtMs',
] as const;
const WIDTH = FIELDS.length;

export class TraceRing {
  private readonly records: Float64Array;
  /** Records written so far (the next goes to written % capacity). */
  private written = 0;

  constructor(readonly capacity: number) {
    this.records = new Float64Array(Math.max(1, capacity) * WIDTH);
  }

  get size(): number {
    return Math.min(this.written, this.capacity);
  }

  push(t: FirstTokenTrace): void {
    if (this.capacity <= 0) return;
    const r = this.records;
    let at = (this.written % this.capacity) * WIDTH;
    this.written += 1;
    r[at++] = t.id;
    r[at++] = t.promptTokens;
    r[at++] = t.maxTokens;
    r[at++] = KINDS.indexOf(t.inFlight);
    r[at++] = t.inFlightMs;
    r[at++] = t.inFlightCpuShare;
    r[at++] = t.messageMs;
    r[at++] = t.queuedMs;
    r[at++] = t.queuedRuns.decode;
    r[at++] = t.queuedRuns.prefill;
    r[at++] = t.queuedRuns.chunk;
    r[at++] = t.prefillMs;
    r[at++] = t.prefillCpuMs;
    r[at++] = t.prefillRows;
    r[at++] = t.prefillPaddedTokens;
    r[at++] = t.sentAtMs;
    r[at] = t.firstTokenAtMs;
  }

  /** The kept traces, oldest first, as objects (built now). */
  toArray(): FirstTokenTrace[] {
    const out: FirstTokenTrace[] = [];
    for (let i = this.written - this.size; i < this.written; i++) out.push(this.read((i % this.capacity) * WIDTH));
    return out;
  }

  private read(at: number): FirstTokenTrace {
    const r = this.records;
    const v = (field: number) => r[at + field] as number;
    return {
      id: v(0),
      promptTokens: v(1),
      maxTokens: v(2),
      inFlight: KINDS[v(3)] ?? 'none',
      inFlightMs: v(4),
      inFlightCpuShare: v(5),
      messageMs: v(6),
      queuedMs: v(7),
      queuedRuns: { decode: v(8), prefill: v(9), chunk: v(10) },
      prefillMs: v(11),
      prefillCpuMs: v(12),
      prefillRows: v(13),
      prefillPaddedTokens: v(14),
      sentAtMs: v(15),
      firstTokenAtMs: v(16),
    };
  }
}
