/**
 * Exactness of continuous batching: with greedy decoding, every request's text under the engine (1 to
 * 32 at once, arriving in a shuffled order at staggered times, some cancelled mid-way) is identical to
 * the same request decoded alone by the plainest reference (test/support/reference-decoder.ts). A
 * cancelled request's pieces are a prefix of its reference text. Real onnxruntime throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../example-models/prng.js';
import { generate, startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../../test/support/llm-test-support.js';
import { referenceDecoder, type ReferenceDecoder } from '../../../test/support/reference-decoder.js';
import type { LlmInstance } from './llm-backend.js';

let repo: TinyDecoderRepo;
let instance: LlmInstance;
/** Narrow length buckets: most sequences move between buckets several times. */
let bucketed: LlmInstance;
/** A prefill budget of 128 padded tokens: requests arriving together are prefilled in several padded runs. */
let smallBudget: LlmInstance;
/** A busy run of several prompts holds at most 24 padded tokens (a wave prefilled about a prompt per run). */
let groupCapped: LlmInstance;
/** A prefill budget of 16 tokens: most prompts are prefilled in chunks, decode steps of the others between them. */
let chunked: LlmInstance;
/** Arrival order (the others run the default shortest_first, with the default aging bound). */
let arrivalOrder: LlmInstance;
/** Shortest requested work first, with an aging bound short enough that some requests age past it. */
let shortestFirst: LlmInstance;
/** Decode steps cut into runs of at most 3 rows (newcomers prefilled between them), over length buckets. */
let splitRuns: LlmInstance;
let reference: ReferenceDecoder;

beforeAll(async () => {
  repo = await tinyDecoderRepo();
  const source = await repo.source({ maxNumSeqs: 32 });
  instance = await startLlm(source);
  bucketed = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { length_buckets: '8,16,24,32,48,64' } }));
  // Grouped up to the whole budget even while busy (busy_prefill_group_tokens at the budget).
  smallBudget = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { max_num_batched_tokens: '128', busy_prefill_group_tokens: '128' } }));
  groupCapped = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { max_num_batched_tokens: '128', busy_prefill_group_tokens: '24' } }));
  chunked = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { max_num_batched_tokens: '16' } }));
  arrivalOrder = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { prefill_order: 'arrival' } }));
  shortestFirst = await startLlm(await repo.source({ maxNumSeqs: 8, parameters: { prefill_order: 'shortest_first', prefill_aging_ms: '30', max_num_batched_tokens: '64' } }));
  splitRuns = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { decode_run_rows: '3', length_buckets: '16,32' } }));
  reference = await referenceDecoder(source.versionDir);
}, 60_000);

afterAll(async () => {
  await instance?.close();
  await bucketed?.close();
  await smallBudget?.close();
  await groupCapped?.close();
  await chunked?.close();
  await shortestFirst?.close();
  await arrivalOrder?.close();
  await splitRuns?.close();
  await reference?.release();
  await repo?.remove();
});

const WORDS = ['the', 'cache', 'stream', 'token', 'node', 'Tessera', 'batch', 'gpu', 'é', '🙂', 'decode', 'x'];

function prompts(count: number, seed: number): { prompt: string; maxTokens: number }[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const words = 1 + Math.floor(random() * 12);
    const prompt = Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
    return { prompt, maxTokens: 4 + Math.floor(random() * 60) };
  });
}

/** `staggerMs` 0: every request sent in the same turn (so they arrive, and are prefilled, together). */
async function runConcurrently(count: number, seed: number, cancelEvery: number, engine: LlmInstance = instance, staggerMs = 5): Promise<void> {
  const cases = prompts(count, seed);
  const expected = await Promise.all(cases.map((c) => reference.generate(c.prompt, c.maxTokens)));
  const random = mulberry32(seed + 1);
  const order = cases.map((_, i) => i).sort(() => random() - 0.5);
  const runs = order.map(async (index, position) => {
    const c = cases[index] as { prompt: string; maxTokens: number };
    if (staggerMs > 0) await new Promise((resolve) => setTimeout(resolve, position * random() * staggerMs));
    const cancel = cancelEvery > 0 && index % cancelEvery === 0;
    const controller = new AbortController();
    const cancelAfter = 1 + (index % 5);
    const got = await generate(engine, c.prompt, { max_tokens: c.maxTokens, temperature: 0 }, {
      signal: controller.signal,
      onPiece: (n) => {
        if (cancel && n >= cancelAfter) controller.abort();
      },
    });
    return { index, cancel, got };
  });
  for (const { index, cancel, got } of await Promise.all(runs)) {
    const want = expected[index] as string;
    if (cancel && 'error' in got.result) {
      expect(got.result.error.code).toBe('CANCELLED');
      expect(want.startsWith(got.text), `request ${index} (cancelled) strayed from its reference`).toBe(true);
    } else {
      expect(got.result).toEqual({ outputs: [] });
      expect(got.text, `request ${index}: ${JSON.stringify(cases[index])}`).toBe(want);
    }
  }
}

describe('continuous batching is exact under greedy decoding', () => {
  it('one request alone', async () => {
    await runConcurrently(1, 1, 0);
  }, 60_000);

  it('8 at once, shuffled arrivals', async () => {
    await runConcurrently(8, 2, 0);
  }, 60_000);

  it('32 at once, shuffled arrivals, every third cancelled mid-way', async () => {
    await runConcurrently(32, 3, 3);
    const stats = await instance.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    // The steps really batched: far fewer steps than tokens.
    expect(stats.stepSequences).toBeGreaterThan(stats.steps * 2);
  }, 120_000);

  it('32 at once over narrow length buckets: sequences moving between buckets keep their tokens', async () => {
    await runConcurrently(32, 4, 3, bucketed);
    const stats = await bucketed.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    expect(stats.bucketMoves).toBeGreaterThan(32);
    expect(stats.copies.bucketFloats).toBeGreaterThan(0);
    expect(stats.stepRuns).toBeGreaterThan(stats.steps);
  }, 120_000);

  it('32 arriving together, prefilled in padded groups of mixed prompt lengths, some cancelled mid-way', async () => {
    await runConcurrently(32, 5, 4, smallBudget, 0);
    const stats = await smallBudget.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    // Runs of several rows, padded (mixed lengths), each within the budget of 128 padded tokens unless alone.
    expect(stats.prefillRuns).toBeLessThan(stats.prefills / 2);
    expect(stats.prefillPaddedTokens).toBeGreaterThan(stats.prefillTokens);
  }, 120_000);

  it('32 arriving together on a busy engine, grouped only within busy_prefill_group_tokens, some cancelled mid-way', async () => {
    await runConcurrently(32, 10, 4, groupCapped, 0);
    const stats = await groupCapped.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 32 });
    // Prompts of 3-10 words: two rarely fit 24 padded tokens, so most runs hold one prompt.
    expect(stats.prefillRuns).toBeGreaterThan(stats.prefills / 2);
  }, 120_000);

  it('16 at once with prompts longer than the prefill budget: chunked prefills keep their tokens', async () => {
    await runConcurrently(16, 6, 5, chunked);
    const stats = await chunked.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    expect(stats.prefillChunks).toBeGreaterThan(16);
  }, 120_000);

  it('32 at once under prefill_order arrival, shuffled arrivals, some cancelled mid-way', async () => {
    await runConcurrently(32, 8, 3, arrivalOrder);
    expect(await arrivalOrder.engineStats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
  }, 120_000);

  it('32 arriving together under prefill_order shortest_first with a 30 ms aging bound (admitted out of arrival order, 8 at a time), some cancelled mid-way', async () => {
    await runConcurrently(32, 7, 4, shortestFirst, 0);
    const stats = await shortestFirst.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0, prefills: 32 });
  }, 120_000);

  it('32 at once with decode steps cut into runs of at most 3 rows, newcomers prefilled between them, some cancelled mid-way', async () => {
    await runConcurrently(32, 9, 3, splitRuns);
    const stats = await splitRuns.engineStats();
    expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
    // Runs of at most 3 rows: more runs than steps. How many rows a step holds, and so how many runs it takes,
    // is up to timing (a fast machine drains the tail in many one-run steps); batch-engine.test.ts holds a run
    // to check the order, and the bound below checks the cut.
    expect(stats.stepRuns).toBeGreaterThan(stats.steps);
    expect(stats.stepSequences).toBeLessThanOrEqual(stats.stepRuns * 3);
  }, 120_000);

  it('32 at once over one bucket in length lanes: rows moving between lanes keep their tokens, some cancelled mid-way', async () => {
    // One bucket, steps cut into runs of at most 4 rows: rows sorted into length lanes (length-lanes.ts), moving between them.
    // Started here, not in beforeAll, so the shared hook's time does not grow.
    const laned = await startLlm(await repo.source({ maxNumSeqs: 32, parameters: { decode_run_rows: '4', length_buckets: 'none' } }));
    try {
      await runConcurrently(32, 11, 3, laned);
      const stats = await laned.engineStats();
      expect(stats).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
      // Rows moved between lanes (newcomers sorted in, lanes rebalanced as others left), each lane a run.
      expect(stats.bucketMoves).toBeGreaterThan(8);
      expect(stats.copies.bucketFloats).toBeGreaterThan(0);
      // More runs than steps (the full steps take 8); the average depends on how many rows each step held (timing).
      expect(stats.stepRuns).toBeGreaterThan(stats.steps);
      expect(stats.stepSequences).toBeLessThanOrEqual(stats.stepRuns * 4);
    } finally {
      await laned.close();
    }
  }, 120_000);
});
