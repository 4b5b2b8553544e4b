/**
 * The llm-batching bench's client: streamed generate requests (`/v2/models/<m>/generate_stream`, SSE)
 * with time to first token, inter-token gaps and token counts recorded, and the three ways of offering
 * load it compares: closed loop (each client sends its next request when the last ends), whole-request
 * batches (a batch of requests sent together, the next only once its longest member ended: Triton's
 * dynamic batcher for generation, implemented here, static or shrinking), and a lone probe measuring TTFT.
 */
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';

export interface StreamRecord {
  readonly startMs: number;
  readonly firstMs: number;
  readonly endMs: number;
  /** Arrival time of every event after the first. */
  readonly eventMs: readonly number[];
  readonly tokens: number;
  readonly ok: boolean;
  /** Cut by the caller's signal before its end (a closed loop's window ended): its tokens are the events read. */
  readonly cut?: boolean;
}

export const MIN_TOKENS = 8;
export const MAX_TOKENS = 256;

/**
 * One streamed request of exactly `maxTokens` tokens (ignore_eos), read to its end. With `usefulTokens`
 * below maxTokens the row computes maxTokens tokens but the caller wants only the first usefulTokens
 * (a static batch's row kept to its longest member): the record keeps the events up to that share of
 * the stream (its last useful token's time is its end) and counts only those tokens.
 */
export async function streamOnce(httpBase: string, model: string, prompt: string, maxTokens: number, usefulTokens = maxTokens, signal?: AbortSignal): Promise<StreamRecord> {
  const startMs = performance.now();
  let firstMs = Number.NaN;
  const eventMs: number[] = [];
  let events = 0;
  const cutRecord = (): StreamRecord => ({ startMs, firstMs, endMs: performance.now(), eventMs, tokens: events, ok: true, cut: true });
  let res: Response;
  try {
    res = await fetch(`${httpBase}/v2/models/${model}/generate_stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text_input: prompt, stream: true, sampling_parameters: JSON.stringify({ max_tokens: maxTokens, ignore_eos: true, temperature: 0 }) }),
      ...(signal !== undefined ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted === true) return cutRecord();
    throw error;
  }
  let ok = res.ok;
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  while (reader !== undefined) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (signal?.aborted === true) return cutRecord();
      throw error;
    }
    const { value, done } = chunk;
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    let boundary: number;
    while ((boundary = pending.indexOf('\n\n')) >= 0) {
      const event = pending.slice(0, boundary);
      pending = pending.slice(boundary + 2);
      if (!event.startsWith('data:')) continue;
      if (event.includes('"error"')) ok = false;
      const now = performance.now();
      if (events === 0) firstMs = now;
      else eventMs.push(now);
      events += 1;
    }
  }
  const endMs = performance.now();
  if (usefulTokens < maxTokens && ok) {
    // An event is one token but for a character split across bytes (held until whole): keep the useful share of events.
    const keep = Math.max(1, Math.round((events * usefulTokens) / maxTokens));
    const kept = eventMs.slice(0, keep - 1);
    return { startMs, firstMs, endMs: kept[kept.length - 1] ?? firstMs, eventMs: kept, tokens: usefulTokens, ok };
  }
  // A piece may hold more than one token (a character split across bytes); the request asked for exactly maxTokens.
  return { startMs, firstMs, endMs, eventMs, tokens: ok ? maxTokens : 0, ok };
}

export function promptFor(random: () => number): string {
  const words = ['stream', 'token', 'cache', 'node', 'batch', 'decode', 'prefill', 'tessera'];
  return Array.from({ length: 3 + Math.floor(random() * 8) }, () => words[Math.floor(random() * words.length)]).join(' ');
}

export function outputLength(random: () => number): number {
  return MIN_TOKENS + Math.floor(random() * (MAX_TOKENS - MIN_TOKENS + 1));
}

/**
 * `clients` closed loops until `untilMs`; every record, to be cut to a window by the caller. With a
 * `fixedLength`, `staggered` gives each client's first request a drawn length, so the clients' restarts
 * spread out instead of coming in waves of `clients` arrivals. `cutAtEnd` cancels the requests still
 * streaming at `untilMs` instead of reading them to their end (the node frees them; a window's figures
 * stop at untilMs anyway, and a 32-deep queue of one-at-a-time requests takes ~30 s to drain).
 */
export async function closedLoop(httpBase: string, model: string, clients: number, untilMs: number, seed: number, fixedLength?: number, staggered = false, cutAtEnd = false): Promise<StreamRecord[]> {
  const records: StreamRecord[] = [];
  const cut = cutAtEnd ? new AbortController() : undefined;
  const timer = cut === undefined ? undefined : setTimeout(() => cut.abort(), Math.max(0, untilMs - performance.now()));
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const random = mulberry32(seed * 1000 + c);
      let first = staggered;
      while (performance.now() < untilMs && cut?.signal.aborted !== true) {
        const length = first ? outputLength(random) : (fixedLength ?? outputLength(random));
        first = false;
        records.push(await streamOnce(httpBase, model, promptFor(random), length, length, cut?.signal));
      }
    }),
  );
  clearTimeout(timer);
  return records;
}

/**
 * One whole-request batch: `size` requests sent together, resolved when all of them ended (the caller
 * sends the next batch only then).
 * - `static` (the issue's baseline: "batch formed once, run to its longest member"): every row keeps
 *   computing until the longest member's last token, as HF generate or a dynamic batcher over a
 *   non-decoupled generate model do; each request asks for the batch's longest length and only its own
 *   first tokens count (streamOnce's usefulTokens).
 * - `shrinking`: each request asks for its own length, so on this engine a finished row leaves the
 *   batch and the later steps run over fewer rows: stronger than static batching.
 * `lengths` (one per row) replaces the rows' drawn lengths (static-batch-draw.ts: mirrored pairs).
 */
export async function wholeRequestBatch(httpBase: string, model: string, size: number, random: () => number, mode: 'static' | 'shrinking', lengths?: readonly number[]): Promise<StreamRecord[]> {
  const batch = Array.from({ length: size }, (_, i) => ({ prompt: promptFor(random), length: lengths?.[i] ?? outputLength(random) }));
  const longest = Math.max(...batch.map((r) => r.length));
  return Promise.all(batch.map((r) => (mode === 'static' ? streamOnce(httpBase, model, r.prompt, longest, r.length) : streamOnce(httpBase, model, r.prompt, r.length))));
}

/**
 * Short requests one after another (TTFT probes) until `untilMs`. With `gapMs`, each waits a drawn pause
 * (0..gapMs) first, so probes land at random points of the engine's runs: a probe sent as the last one
 * ends arrives in step with the engine's loop (through HTTP: just after its next run started).
 */
export async function probes(httpBase: string, model: string, untilMs: number, seed: number, gapMs = 0): Promise<StreamRecord[]> {
  const random = mulberry32(seed);
  const gaps = mulberry32(seed + 1);
  const records: StreamRecord[] = [];
  while (performance.now() < untilMs) {
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gaps() * gapMs));
    records.push(await streamOnce(httpBase, model, promptFor(random), MIN_TOKENS));
  }
  return records;
}

export interface WindowFigures {
  readonly tokensPerSecond: number;
  readonly requests: number;
  readonly errors: number;
  readonly ttftMs: { readonly p50: number; readonly p99: number };
  readonly itlMs: { readonly p50: number; readonly p99: number };
  /** Time per output token after the first, per request: (last - first) / (tokens - 1). */
  readonly tpotMs: { readonly p50: number; readonly p99: number };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * Figures of the window [fromMs, toMs]: tokens are counted where they arrived (each request's tokens
 * spread over its events), TTFT over requests that started inside, gaps that ended inside.
 */
export function windowFigures(records: readonly StreamRecord[], fromMs: number, toMs: number): WindowFigures {
  let tokens = 0;
  const ttft: number[] = [];
  const itl: number[] = [];
  const tpot: number[] = [];
  let requests = 0;
  let errors = 0;
  for (const r of records) {
    // Cancelled at the window's end before its first token: nothing of it was seen (not an error).
    if (r.cut === true && !(r.firstMs >= 0)) continue;
    if (!r.ok) {
      if (r.startMs >= fromMs && r.startMs < toMs) errors += 1;
      continue;
    }
    const times = [r.firstMs, ...r.eventMs];
    const perEvent = r.tokens / times.length;
    for (const t of times) if (t >= fromMs && t < toMs) tokens += perEvent;
    if (r.startMs >= fromMs && r.startMs < toMs) {
      requests += 1;
      ttft.push(r.firstMs - r.startMs);
      if (r.tokens > 1 && r.endMs <= toMs && r.cut !== true) tpot.push(((r.eventMs[r.eventMs.length - 1] ?? r.firstMs) - r.firstMs) / (r.tokens - 1));
    }
    for (let i = 1; i < times.length; i++) if ((times[i] as number) >= fromMs && (times[i] as number) < toMs) itl.push((times[i] as number) - (times[i - 1] as number));
  }
  return {
    tokensPerSecond: tokens / ((toMs - fromMs) / 1000),
    requests,
    errors,
    ttftMs: { p50: percentile(ttft, 50), p99: percentile(ttft, 99) },
    itlMs: { p50: percentile(itl, 50), p99: percentile(itl, 99) },
    tpotMs: { p50: percentile(tpot, 50), p99: percentile(tpot, 99) },
  };
}
