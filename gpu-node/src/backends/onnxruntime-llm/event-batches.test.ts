/**
 * What the engine thread sends the main thread (llm-worker.ts), through a real instance of tiny_decoder:
 * one message per decode step for all its sequences (not one per length-bucket run), every token an event,
 * and nothing more for a stream once it was cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../../test/support/llm-test-support.js';
import type { LlmInstance } from './llm-backend.js';

let repo: TinyDecoderRepo;
let instance: LlmInstance;

beforeAll(async () => {
  repo = await tinyDecoderRepo();
  // Buckets at 16 and 64 cached positions: the prompts below sit in different buckets, so a step is two runs.
  instance = await startLlm(await repo.source({ parameters: { length_buckets: '16,64', decode_run_rows: '0' } }));
});

afterAll(async () => {
  await instance?.close();
  await repo?.remove();
});

describe('event batches from the engine thread', () => {
  it('sends the events of a step in one message, whatever the buckets, and every token as an event', async () => {
    const before = await instance.engineStats();
    const prompts = ['short', 'a prompt of more than sixteen bytes', 'tiny', 'another prompt well past sixteen bytes'];
    const runs = await Promise.all(prompts.map((p) => generate(instance, p, { max_tokens: 12, ignore_eos: true })));
    const after = await instance.engineStats();
    const delta = (key: 'steps' | 'stepRuns' | 'prefillRuns' | 'prefillsBetweenRuns' | 'eventMessages' | 'events') => after[key] - before[key];
    for (const run of runs) expect(run.pieces.join('').length).toBeGreaterThan(0);
    // 12 tokens each, the last carrying `done`.
    expect(delta('events')).toBe(prompts.length * 12);
    // Two buckets ran in most steps: one message per run would exceed this bound.
    expect(delta('stepRuns')).toBeGreaterThan(delta('steps'));
    expect(delta('eventMessages')).toBeLessThanOrEqual(delta('steps') + delta('prefillRuns') + delta('prefillsBetweenRuns'));
  });

  it('sends nothing more for a stream once it was cancelled, while the others go on', async () => {
    const controller = new AbortController();
    let piecesAtEnd = -1;
    let pieces = 0;
    const cancelled = generate(instance, 'to be cancelled', { max_tokens: 200, ignore_eos: true }, {
      signal: controller.signal,
      onPiece: (n) => {
        pieces = n;
        if (n === 3) controller.abort();
      },
    }).then((r) => {
      piecesAtEnd = pieces;
      return r;
    });
    const other = generate(instance, 'runs on', { max_tokens: 120, ignore_eos: true });
    const result = await cancelled;
    expect('error' in result.result ? result.result.error.message : '').toMatch(/cancelled/);
    // The other stream ran on for many steps after the cancel (a piece per token but where a character's bytes
    // are split over tokens); the cancelled one got no piece after its end.
    expect((await other).pieces.length).toBeGreaterThan(60);
    expect(pieces).toBe(piecesAtEnd);
    expect(await instance.engineStats()).toMatchObject({ active: 0, waiting: 0 });
  });
});
