/**
 * The order of work inside the engine's loop, which the exactness tests cannot see: a newcomer's first
 * token goes out right after its prefill (not after the next decode step), and a request that arrives
 * while a bucket's run is in flight is prefilled before the next bucket's run. The runner is a stand-in
 * (zero outputs of the right shapes) because the test must hold one run in flight at a chosen moment,
 * which a real session gives no handle for; exactness with the real session is exactness.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BatchEngine, type DecoderRunner, type EngineOptions, type SequenceEvent } from './batch-engine.js';
import type { SamplingParameters } from './sampling.js';

const LAYOUT = { layers: 1, heads: 1, headDim: 2 };
const VOCAB = 4;
const GREEDY: SamplingParameters = { maxTokens: 3, temperature: 0, topK: 0, topP: 1, seed: 1, stop: [], ignoreEos: true };

/** Zero logits and presents of the shapes the engine asks for; decode runs may be held by `hold`, prefills by `holdPrefill`. */
function standInRunner(log: string[], hold: () => Promise<void>, holdPrefill: () => Promise<void> = () => Promise.resolve()): DecoderRunner {
  return {
    async run(feeds, into?): Promise<Record<string, { data: Float32Array; dims: readonly number[] }>> {
      const [rows, seq] = feeds['input_ids']!.dims as [number, number];
      if (into === undefined) {
        const past = feeds['past_key_values.0.key']!.dims[2] as number;
        log.push(`${rows === 1 ? `prefill of ${seq}` : `prefill of ${rows} rows of ${seq}`}${past > 0 ? ` after ${past}` : ''}`);
        await holdPrefill();
        const total = past + seq;
        const present = { data: new Float32Array(rows * total * LAYOUT.heads * LAYOUT.headDim), dims: [rows, LAYOUT.heads, total, LAYOUT.headDim] };
        return { logits: { data: new Float32Array(rows * seq * VOCAB), dims: [rows, seq, VOCAB] }, 'present.0.key': present, 'present.0.value': present };
      }
      const capacity = feeds['past_key_values.0.key']!.dims[2] as number;
      log.push(`decode of ${rows} at capacity ${capacity}`);
      await hold();
      for (const tensor of Object.values(into)) (tensor.data as Float32Array).fill(0);
      return {};
    },
  };
}

function engineWith(
  log: string[],
  hold: () => Promise<void>,
  events: SequenceEvent[],
  holdPrefill?: () => Promise<void>,
  maxBatchedTokens = 2048,
  more: Partial<EngineOptions> = {},
): BatchEngine {
  return new BatchEngine(
    standInRunner(log, hold, holdPrefill),
    LAYOUT,
    VOCAB,
    { decode: (ids) => ids.map((i) => 'abcd'[i]).join('') },
    { maxNumSeqs: 8, kvCacheBytes: 1 << 20, contextLength: 64, eosId: undefined, admission: 'wait', maxQueueSize: 0, lengthBuckets: [4, 8], maxBatchedTokens, ...more },
    (batch) => {
      log.push(`emit ${batch.map((e) => `${e.id}${e.done === undefined ? '' : `:${e.done}`}`).join(',')}`);
      events.push(...batch);
    },
  );
}

describe('BatchEngine order of work', () => {
  it('sends first tokens after prefill and prefills a newcomer between bucket runs', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    let release: () => void = () => {};
    let firstDecode = true;
    const held = new Promise<void>((resolve) => (release = resolve));
    let markHeld: () => void = () => {};
    const holding = new Promise<void>((resolve) => (markHeld = resolve));
    const engine = engineWith(
      log,
      () => {
        if (!firstDecode) return Promise.resolve();
        firstDecode = false;
        markHeld();
        return held;
      },
      events,
    );
    // Request 1 in the first bucket (2 cached positions), request 2 in the second (5).
    engine.add({ id: 1, promptIds: [1, 2], params: GREEDY, priority: 0 });
    engine.add({ id: 2, promptIds: [1, 2, 3, 1, 2], params: GREEDY, priority: 0 });
    await holding;
    // The first bucket's run is in flight: request 3 arrives now.
    engine.add({ id: 3, promptIds: [3, 3], params: GREEDY, priority: 0 });
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    while (engine.stats().active > 0) await new Promise((resolve) => setTimeout(resolve, 10));

    expect(log.slice(0, 7)).toEqual([
      // Both waiting requests prefilled in one run, padded to the longer prompt; both first tokens out
      // before any decode step.
      'prefill of 2 rows of 5',
      'emit 1,2',
      'decode of 1 at capacity 4',
      // The first bucket's news out, then request 3 prefilled and its first token out, all before the
      // second bucket's run.
      'emit 1',
      'prefill of 2',
      'emit 3',
      'decode of 1 at capacity 8',
    ]);
    const done = events.filter((e) => e.done !== undefined).map((e) => `${e.id}:${e.done}`);
    expect(done.sort()).toEqual(['1:length', '2:length', '3:length']);
    for (const id of [1, 2, 3]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 3, prefillRuns: 2, prefillTokens: 9, prefillPaddedTokens: 12, prefillsBetweenRuns: 1 });
  });

  /** An engine whose first decode run is held until `release`; `holding` resolves once it is in flight. */
  function heldEngine(log: string[], events: SequenceEvent[], maxBatchedTokens = 2048, holdPrefill?: () => Promise<void>, more: Partial<EngineOptions> = {}) {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let markHeld: () => void = () => {};
    const holding = new Promise<void>((resolve) => (markHeld = resolve));
    let first = true;
    const engine = engineWith(
      log,
      () => {
        if (!first) return Promise.resolve();
        first = false;
        markHeld();
        return held;
      },
      events,
      holdPrefill,
      maxBatchedTokens,
      more,
    );
    return { engine, holding, release: () => release() };
  }

  async function drain(engine: BatchEngine): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    while (engine.stats().active > 0 || engine.stats().waiting > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  it('cuts a step into runs of at most decode_run_rows rows and prefills a newcomer between them', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    // One bucket, so only decode_run_rows cuts the step.
    const { engine, holding, release } = heldEngine(log, events, 2048, undefined, { lengthBuckets: [], decodeRunRows: 2 });
    for (const id of [1, 2, 3, 4]) engine.add({ id, promptIds: [1, 2], params: GREEDY, priority: 0 });
    await holding;
    // The step's first run (rows 1-2) is in flight: request 5 arrives now.
    engine.add({ id: 5, promptIds: [3, 3], params: GREEDY, priority: 0 });
    release();
    await drain(engine);
    expect(log.slice(0, 9)).toEqual([
      'prefill of 4 rows of 2',
      'emit 1,2,3,4',
      'decode of 2 at capacity 32',
      'emit 1,2',
      // Prefilled before the step's second run, not after the whole step.
      'prefill of 2',
      'emit 5',
      'decode of 2 at capacity 32',
      // Rows 3 and 4 moved to the second length lane, last row first (length-lanes.ts).
      'emit 4,3',
      // Next step: five rows in balanced runs of 1, 2 and 2, shortest first: request 5, a token behind, alone.
      'decode of 1 at capacity 32',
    ]);
    expect(log.slice(9, 14)).toEqual(['emit 5', 'decode of 2 at capacity 32', 'emit 4:length,3:length', 'decode of 2 at capacity 32', 'emit 1:length,2:length']);
    for (const id of [1, 2, 3, 4, 5]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefillsBetweenRuns: 1 });
  });

  it('with one bucket, runs each step over length lanes: a run is padded to its own longest row, not the step\'s', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const engine = engineWith(log, () => Promise.resolve(), events, undefined, 2048, { lengthBuckets: [], decodeRunRows: 1, contextLength: 256 });
    engine.add({ id: 1, promptIds: [1, 2], params: GREEDY, priority: 0 });
    engine.add({ id: 2, promptIds: Array.from({ length: 70 }, () => 1), params: GREEDY, priority: 0 });
    await drain(engine);
    expect(log.slice(0, 6)).toEqual([
      'prefill of 2 rows of 70',
      'emit 1,2',
      // Request 1 (2 cached positions) in the first lane, request 2 (70) in the second: capacities 32 and 96
      // (one cache for both would run each at 96).
      'decode of 1 at capacity 32',
      'emit 1',
      'decode of 1 at capacity 96',
      'emit 2',
    ]);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, bucketMoves: 1 });
  });

  it('traces where a newcomer\'s first token went: the run in flight and its kind, runs queued ahead, its own prefill', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 2048, undefined, { lengthBuckets: [] });
    engine.add({ id: 1, promptIds: [1, 2], params: GREEDY, priority: 0 });
    await holding;
    const sentAtMs = performance.timeOrigin + performance.now();
    engine.add({ id: 2, promptIds: [3, 3, 3], params: { ...GREEDY, maxTokens: 2 }, priority: 0, sentAtMs });
    await new Promise((resolve) => setTimeout(resolve, 15));
    release();
    await drain(engine);
    const traces = engine.stats().recentFirstTokens;
    expect(traces.map((t) => [t.id, t.inFlight, t.promptTokens, t.maxTokens, t.prefillRows, t.prefillPaddedTokens])).toEqual([
      [1, 'none', 2, 3, 1, 2],
      [2, 'decode', 3, 2, 1, 3],
    ]);
    const newcomer = traces[1]!;
    // It waited for the held decode run (held 15 ms), then no other run went before its prefill.
    expect(newcomer.inFlightMs).toBeGreaterThanOrEqual(14);
    expect(newcomer.queuedRuns).toEqual({ decode: 0, prefill: 0, chunk: 0 });
    expect(newcomer.sentAtMs).toBe(sentAtMs);
    expect(newcomer.firstTokenAtMs).toBeGreaterThanOrEqual(sentAtMs + newcomer.inFlightMs + newcomer.queuedMs + newcomer.prefillMs - 0.01);
  });

  it('prefills every request that arrived during a run in one run before the next decode step, in priority order', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 2048, undefined, { prefillOrder: 'arrival' });
    engine.add({ id: 1, promptIds: [1, 2], params: GREEDY, priority: 0 });
    await holding;
    // Four arrivals while the decode run is in flight, of mixed lengths and priorities.
    engine.add({ id: 2, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    engine.add({ id: 3, promptIds: [3], params: GREEDY, priority: 0 });
    engine.add({ id: 4, promptIds: [2, 2, 2, 2, 2, 2], params: GREEDY, priority: 0 });
    engine.add({ id: 5, promptIds: [1, 1], params: GREEDY, priority: 1 });
    release();
    await drain(engine);
    expect(log.slice(0, 6)).toEqual([
      'prefill of 2',
      'emit 1',
      'decode of 1 at capacity 4',
      'emit 1',
      // One run for all four, padded to the longest (6); request 5 (priority 1) first.
      'prefill of 4 rows of 6',
      'emit 5,2,3,4',
    ]);
    for (const id of [1, 2, 3, 4, 5]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 5, prefillRuns: 2, prefillTokens: 14, prefillPaddedTokens: 26 });
  });

  it('splits the waiting requests into runs of at most max_num_batched_tokens padded tokens, in order', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 8, undefined, { prefillOrder: 'arrival' });
    engine.add({ id: 1, promptIds: [1], params: GREEDY, priority: 0 });
    await holding;
    engine.add({ id: 2, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    engine.add({ id: 3, promptIds: [1, 2], params: GREEDY, priority: 0 });
    // 2 rows × 3 = 6; a third row of 3 would make 9 > 8.
    engine.add({ id: 4, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    release();
    await drain(engine);
    // Two runs, in arrival order, both before the next decode step; each run's first tokens out at its end.
    expect(log.slice(2, 8)).toEqual(['decode of 1 at capacity 4', 'emit 1', 'prefill of 2 rows of 3', 'emit 2,3', 'prefill of 3', 'emit 4']);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 4, prefillRuns: 3, prefillChunks: 0 });
  });

  it('caps prefill runs at busy_prefill_tokens while sequences decode or others wait, at max_num_batched_tokens when a run is the only work', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 8, undefined, { prefillOrder: 'arrival', busyPrefillTokens: 4 });
    // Alone on an idle engine: 6 tokens in one run (not chunked at the busy cap of 4).
    engine.add({ id: 1, promptIds: [1, 2, 3, 1, 2, 3], params: { ...GREEDY, maxTokens: 8 }, priority: 0 });
    await holding;
    // Request 1 decodes: two prompts of 3 would fit the full cap (2 × 3 = 6 <= 8), not the busy one (4).
    engine.add({ id: 2, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    engine.add({ id: 3, promptIds: [3, 2, 1], params: GREEDY, priority: 0 });
    // A prompt over the busy cap while others decode: chunks of 4.
    engine.add({ id: 4, promptIds: [1, 1, 1, 1, 2, 2], params: GREEDY, priority: 0 });
    release();
    await drain(engine);
    expect(log.filter((l) => l.startsWith('prefill'))).toEqual(['prefill of 6', 'prefill of 3', 'prefill of 3', 'prefill of 4', 'prefill of 2 after 4']);
    for (const id of [1, 2, 3, 4]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(id === 1 ? 8 : 3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 4, prefillRuns: 5, prefillChunks: 2 });
  });

  it('on a busy engine groups prompts only within busy_prefill_group_tokens, and still runs a prompt up to busy_prefill_tokens whole', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 16, undefined, { prefillOrder: 'arrival', busyPrefillTokens: 8, busyPrefillGroupTokens: 4 });
    engine.add({ id: 1, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 8 }, priority: 0 });
    await holding;
    // Request 1 decodes: two prompts of 3 fit the busy run cap (6 <= 8), not the group cap (4): a run each.
    engine.add({ id: 2, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    engine.add({ id: 3, promptIds: [3, 2, 1], params: GREEDY, priority: 0 });
    // One prompt over the group cap but within the run cap: one run, not chunked.
    engine.add({ id: 4, promptIds: [1, 1, 1, 1, 2, 2], params: GREEDY, priority: 0 });
    // Two prompts of 2: 4 padded tokens, within the group cap: one run.
    engine.add({ id: 5, promptIds: [2, 2], params: GREEDY, priority: 0 });
    engine.add({ id: 6, promptIds: [1, 1], params: GREEDY, priority: 0 });
    release();
    await drain(engine);
    expect(log.filter((l) => l.startsWith('prefill'))).toEqual(['prefill of 3', 'prefill of 3', 'prefill of 3', 'prefill of 6', 'prefill of 2 rows of 2']);
    for (const id of [1, 2, 3, 4, 5, 6]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(id === 1 ? 8 : 3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 6, prefillRuns: 5, prefillChunks: 0 });
  });

  it('prefills a prompt longer than the budget in chunks, with the running sequences decoded between them', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 4, undefined, { prefillOrder: 'arrival' });
    engine.add({ id: 1, promptIds: [1], params: { ...GREEDY, maxTokens: 6 }, priority: 0 });
    await holding;
    // 10 tokens over a budget of 4: chunks of 4, 4 and 2, each attending to the chunks before it.
    engine.add({ id: 2, promptIds: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1], params: GREEDY, priority: 0 });
    // Behind it in the queue: prefilled once the long prompt is.
    engine.add({ id: 3, promptIds: [2, 2], params: GREEDY, priority: 0 });
    release();
    await drain(engine);
    const prefills = log.filter((l) => l.startsWith('prefill'));
    expect(prefills).toEqual(['prefill of 1', 'prefill of 4', 'prefill of 4 after 4', 'prefill of 2 after 8', 'prefill of 2']);
    // Request 1 keeps decoding between the chunks.
    const between = (a: string, b: string) => log.slice(log.indexOf(a) + 1, log.indexOf(b)).filter((l) => l.startsWith('decode')).length;
    expect(log.slice(0, log.indexOf('prefill of 4')).filter((l) => l.startsWith('decode')).length).toBe(1);
    expect(between('prefill of 4 after 4', 'prefill of 2 after 8')).toBe(1);
    for (const id of [1, 2, 3]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(id === 1 ? 6 : 3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 3, prefillRuns: 5, prefillChunks: 3 });
  });

  it('a prompt cancelled during one of its chunks leaves as cancelled, runs no further chunk and frees its cache', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    let releaseChunk: () => void = () => {};
    const chunkHeld = new Promise<void>((resolve) => (releaseChunk = resolve));
    let markChunk: () => void = () => {};
    const atChunk = new Promise<void>((resolve) => (markChunk = resolve));
    // The second chunk's run is held until the cancel is in.
    const { engine, holding, release } = heldEngine(log, events, 4, () => {
      if (log[log.length - 1] !== 'prefill of 4 after 4') return Promise.resolve();
      markChunk();
      return chunkHeld;
    });
    engine.add({ id: 1, promptIds: [1], params: { ...GREEDY, maxTokens: 6 }, priority: 0 });
    await holding;
    engine.add({ id: 2, promptIds: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1], params: GREEDY, priority: 0 });
    release();
    await atChunk;
    engine.cancel(2);
    releaseChunk();
    await drain(engine);
    expect(events.filter((e) => e.id === 2)).toEqual([{ id: 2, text: '', tokens: 0, done: 'cancelled' }]);
    expect(log.filter((l) => l.includes('after 8'))).toEqual([]);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
  });

  it('a request cancelled during a batched prefill leaves as cancelled; the others of its run go on', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    let releasePrefill: () => void = () => {};
    const prefillHeld = new Promise<void>((resolve) => (releasePrefill = resolve));
    let markPrefill: () => void = () => {};
    const prefilling = new Promise<void>((resolve) => (markPrefill = resolve));
    const engine = engineWith(log, () => Promise.resolve(), events, () => {
      markPrefill();
      return prefillHeld;
    });
    engine.add({ id: 1, promptIds: [1, 2], params: GREEDY, priority: 0 });
    engine.add({ id: 2, promptIds: [1, 2, 3], params: GREEDY, priority: 0 });
    engine.add({ id: 3, promptIds: [3], params: GREEDY, priority: 0 });
    await prefilling;
    engine.cancel(2);
    releasePrefill();
    await drain(engine);
    expect(log[0]).toBe('prefill of 3 rows of 3');
    expect(events.filter((e) => e.id === 2)).toEqual([{ id: 2, text: '', tokens: 0, done: 'cancelled' }]);
    for (const id of [1, 3]) expect(events.filter((e) => e.id === id).reduce((n, e) => n + e.tokens, 0)).toBe(3);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 3, prefillRuns: 1 });
  });

  it('a request cancelled while its prefill is in flight leaves as cancelled and frees its cache', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let markHeld: () => void = () => {};
    const holding = new Promise<void>((resolve) => (markHeld = resolve));
    const engine = engineWith(log, () => Promise.resolve(), events, () => {
      markHeld();
      return held;
    });
    engine.add({ id: 7, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 50 }, priority: 0 });
    await holding;
    engine.cancel(7);
    release();
    while (!events.some((e) => e.done !== undefined)) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events.filter((e) => e.done !== undefined)).toEqual([{ id: 7, text: '', tokens: 0, done: 'cancelled' }]);
    expect(log.filter((l) => l.startsWith('decode'))).toEqual([]);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
  });

  /** The first-token order of the requests prefilled after the held decode run (one prompt per run: budget 3). */
  async function prefillOrderOf(more: Partial<EngineOptions>, arrive: (engine: BatchEngine) => Promise<void>): Promise<number[]> {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 3, undefined, more);
    engine.add({ id: 1, promptIds: [1], params: GREEDY, priority: 0 });
    await holding;
    await arrive(engine);
    release();
    await drain(engine);
    const firsts: number[] = [];
    for (const e of events) if (e.id !== 1 && !firsts.includes(e.id)) firsts.push(e.id);
    expect(engine.stats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    return firsts;
  }

  const wave = (engine: BatchEngine) => {
    // A wave of long generations, then a short request behind it, then a mid one with a shorter prompt.
    for (const id of [2, 3, 4]) engine.add({ id, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 20 }, priority: 0 });
    engine.add({ id: 5, promptIds: [2, 2, 2], params: { ...GREEDY, maxTokens: 2 }, priority: 0 });
    engine.add({ id: 6, promptIds: [3, 3], params: { ...GREEDY, maxTokens: 20 }, priority: 0 });
    return Promise.resolve();
  };

  it('prefill_order arrival prefills first come, first served', async () => {
    expect(await prefillOrderOf({ prefillOrder: 'arrival' }, wave)).toEqual([2, 3, 4, 5, 6]);
  });

  it('prefill_order shortest_first (the default) prefills the least requested work first: max_tokens, then prompt length, then arrival', async () => {
    expect(await prefillOrderOf({ prefillOrder: 'shortest_first' }, wave)).toEqual([5, 6, 2, 3, 4]);
    expect(await prefillOrderOf({}, wave)).toEqual([5, 6, 2, 3, 4]);
  });

  it('prefill_order shortest_first keeps priority first', async () => {
    const order = await prefillOrderOf({ prefillOrder: 'shortest_first' }, (engine) => {
      engine.add({ id: 2, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 20 }, priority: 2 });
      engine.add({ id: 3, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 30 }, priority: 1 });
      engine.add({ id: 4, promptIds: [1], params: { ...GREEDY, maxTokens: 2 }, priority: 0 });
      return Promise.resolve();
    });
    expect(order).toEqual([3, 2, 4]);
  });

  it('prefill_order shortest_first with aging: a long request that waited past prefill_aging_ms goes before younger short ones', async () => {
    const arrive = async (engine: BatchEngine) => {
      engine.add({ id: 2, promptIds: [1, 2, 3], params: { ...GREEDY, maxTokens: 20 }, priority: 0 });
      // Past an aging bound of 20 ms before the short ones arrive (the decode run is still held).
      await new Promise((resolve) => setTimeout(resolve, 40));
      engine.add({ id: 3, promptIds: [1], params: { ...GREEDY, maxTokens: 2 }, priority: 0 });
      engine.add({ id: 4, promptIds: [2], params: { ...GREEDY, maxTokens: 2 }, priority: 0 });
    };
    expect(await prefillOrderOf({ prefillOrder: 'shortest_first', prefillAgingMs: 20 }, arrive)).toEqual([2, 3, 4]);
    // The same arrivals with a bound they never reach: the long one is passed over.
    expect(await prefillOrderOf({ prefillOrder: 'shortest_first', prefillAgingMs: 600_000 }, arrive)).toEqual([3, 4, 2]);
  });

  it('prefill_order shortest_first groups only comparable work in one prefill run (a short request does not wait for long prompts)', async () => {
    const log: string[] = [];
    const events: SequenceEvent[] = [];
    const { engine, holding, release } = heldEngine(log, events, 2048, undefined, { prefillOrder: 'shortest_first' });
    engine.add({ id: 1, promptIds: [1], params: GREEDY, priority: 0 });
    await holding;
    await wave(engine);
    release();
    await drain(engine);
    // Request 5 (max_tokens 2) alone, its first token out before the long ones' run; arrival order would put all five in one run.
    expect(log.slice(3, 7)).toEqual(['emit 1', 'prefill of 3', 'emit 5', 'prefill of 4 rows of 3']);
    expect(log[7]).toBe('emit 6,2,3,4');
  });
});
