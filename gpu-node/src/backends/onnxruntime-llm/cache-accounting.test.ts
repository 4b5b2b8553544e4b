/**
 * Cache accounting, admission and priorities of the engine: after a soak of finished, cancelled (while
 * waiting and mid-way) and refused requests the cache is empty and every counter is back to 0; a
 * request the budget cannot take waits (or is refused under `admission: reject`); waiting requests are
 * admitted by priority, then arrival.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../example-models/prng.js';
import { generate, startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../../test/support/llm-test-support.js';
import type { LlmInstance } from './llm-backend.js';

let repo: TinyDecoderRepo;
const started: LlmInstance[] = [];

beforeAll(async () => {
  repo = await tinyDecoderRepo();
});

afterAll(async () => {
  for (const instance of started) await instance.close();
  await repo?.remove();
});

/** tiny_decoder holds 4 layers × key/value × 1 head × 32 floats × 4 bytes = 1024 bytes per token. */
const BYTES_PER_TOKEN = 1024;

async function instanceWith(options: Parameters<TinyDecoderRepo['source']>[0]): Promise<LlmInstance> {
  const instance = await startLlm(await repo.source(options));
  started.push(instance);
  return instance;
}

/**
 * A long request and a promise of its first piece: once that came, it holds the engine for a while.
 * `onFinal` runs at its last response, in the order responses arrive (unlike `done`'s promise chain).
 */
function running(instance: LlmInstance, name: string, maxTokens: number, onFinal?: () => void): { started: Promise<void>; done: ReturnType<typeof generate> } {
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = generate(instance, name, { max_tokens: maxTokens, ignore_eos: true }, { onPiece: () => markStarted(), ...(onFinal === undefined ? {} : { onFinal }) });
  return { started, done };
}

async function expectEmpty(instance: LlmInstance): Promise<void> {
  expect(instance.inflight).toBe(0);
  expect(await instance.engineStats()).toMatchObject({ active: 0, waiting: 0, reservedBytes: 0, allocatedBytes: 0 });
}

describe('cache accounting', () => {
  it.each([
    ['arrival', { prefill_order: 'arrival' }],
    ['shortest_first, aging 20 ms', { prefill_order: 'shortest_first', prefill_aging_ms: '20' }],
    ['shortest_first, decode runs of at most 2 rows', { decode_run_rows: '2' }],
    ['shortest_first, one bucket in length lanes of 2 rows', { decode_run_rows: '2', length_buckets: 'none' }],
  ])('is back to empty after a soak of finished, cancelled and refused requests (prefill order %s)', async (_, order) => {
    // Room for about three sequences of 100 tokens, at most 4 running and 6 waiting.
    // A prefill budget of two typical prompts: requests admitted together are prefilled in padded runs of 1-2 rows,
    // and the long prompts of every fourth request (over the budget) in chunks.
    const instance = await instanceWith({ maxNumSeqs: 4, kvCacheBytes: 300 * BYTES_PER_TOKEN, maxQueueSize: 6, parameters: { max_num_batched_tokens: '48', ...order } });
    const random = mulberry32(99);
    const outcomes = { finished: 0, cancelled: 0, refused: 0 };
    for (let round = 0; round < 6; round++) {
      const runs = Array.from({ length: 16 }, async (_, i) => {
        const kind = Math.floor(random() * 5);
        const controller = new AbortController();
        const sampling =
          kind === 4 ? { max_tokens: 5000 } : { max_tokens: 10 + Math.floor(random() * 80), temperature: random() < 0.5 ? 0 : 0.8, seed: i };
        if (kind === 3) setTimeout(() => controller.abort(), Math.floor(random() * 30));
        const prompt = i % 4 === 0 ? `round ${round} request ${i} `.repeat(4) : `round ${round} request ${i}${' x'.repeat(i % 3)}`;
        const got = await generate(instance, prompt, sampling, {
          signal: controller.signal,
          onPiece: (n) => {
            if (kind === 2 && n >= 3) controller.abort();
          },
        });
        if (!('error' in got.result)) outcomes.finished += 1;
        else if (got.result.error.code === 'CANCELLED') outcomes.cancelled += 1;
        else outcomes.refused += 1;
      });
      await Promise.all(runs);
      await expectEmpty(instance);
    }
    expect(outcomes.finished).toBeGreaterThan(0);
    expect(outcomes.cancelled).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
    const stats = await instance.engineStats();
    expect(stats.steps).toBeGreaterThan(0);
    expect(stats.copies.stepFloats).toBeGreaterThan(0);
    // Some prefill runs held more than one request of different lengths (padded), some were chunks of long prompts.
    expect(stats.prefillPaddedTokens).toBeGreaterThan(stats.prefillTokens);
    expect(stats.prefillChunks).toBeGreaterThan(0);
    // Sequences crossed the default length buckets' first bound (64) and were accounted for there too.
    expect(stats.bucketMoves).toBeGreaterThan(0);
  }, 180_000);
});

describe('admission', () => {
  it('a request the budget cannot take waits for the running one to leave', async () => {
    const instance = await instanceWith({ maxNumSeqs: 8, kvCacheBytes: 120 * BYTES_PER_TOKEN });
    const events: string[] = [];
    const first = running(instance, 'first', 100, () => events.push('first done'));
    await first.started;
    const second = generate(instance, 'second', { max_tokens: 100 }, { onPiece: (n) => n === 1 && events.push('second started') });
    const [a, b] = await Promise.all([first.done, second]);
    expect(a.result).toEqual({ outputs: [] });
    expect(b.result).toEqual({ outputs: [] });
    expect(events.indexOf('second started')).toBeGreaterThan(events.indexOf('first done'));
    await expectEmpty(instance);
  }, 60_000);

  it('admission reject refuses at once with UNAVAILABLE while the budget is full', async () => {
    const instance = await instanceWith({ maxNumSeqs: 8, kvCacheBytes: 120 * BYTES_PER_TOKEN, admission: 'reject' });
    const first = running(instance, 'first', 100);
    await first.started;
    const second = await generate(instance, 'second', { max_tokens: 100 });
    expect(second.result).toMatchObject({ error: { code: 'UNAVAILABLE', message: expect.stringContaining('KV cache is full') } });
    expect((await first.done).result).toEqual({ outputs: [] });
    await expectEmpty(instance);
  }, 60_000);

  it.each([
    ['arrival', { prefill_order: 'arrival' }],
    ['shortest_first (the default)', {}],
  ])('admits waiting requests by priority (1 highest, 0 the default level), then arrival (prefill order %s: equal work)', async (_, prefillOrder) => {
    const instance = await instanceWith({ maxNumSeqs: 1, parameters: prefillOrder });
    const order: string[] = [];
    const run = (name: string, priority: number | undefined, maxTokens: number) =>
      generate(instance, name, { max_tokens: maxTokens, ignore_eos: true }, priority === undefined ? {} : { priority }).then(() => order.push(name));
    const blocker = running(instance, 'blocker', 300);
    await blocker.started;
    const blockerDone = blocker.done.then(() => order.push('blocker'));
    const queued = [run('default-a', undefined, 2), run('low', 3, 2), run('high', 1, 2), run('default-b', 0, 2), run('mid', 2, 2)];
    await Promise.all([blockerDone, ...queued]);
    expect(order).toEqual(['blocker', 'high', 'mid', 'low', 'default-a', 'default-b']);
    await expectEmpty(instance);
  }, 60_000);
});
