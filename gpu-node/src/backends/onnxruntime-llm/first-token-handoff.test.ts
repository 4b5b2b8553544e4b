/**
 * The first-token hand-off (first-token-handoff.ts) through a real instance of tiny_decoder: the engine thread
 * sleeps after posting a first token until the main thread has handled it, so no model run of the engine
 * overlaps the main thread's handling of a first token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../../test/support/llm-test-support.js';
import type { LlmInstance } from './llm-backend.js';

/** Long enough that an engine left running would finish several decode steps meanwhile, far below the cap. */
const HOLD_MS = 100;

let repo: TinyDecoderRepo;
let instance: LlmInstance;

beforeAll(async () => {
  repo = await tinyDecoderRepo();
  // The cap far above HOLD_MS: the engine's wait ends with the main thread's handling, never with the cap.
  instance = await startLlm(await repo.source({ parameters: { first_token_handoff_us: '1000000' } }));
});

afterAll(async () => {
  await instance?.close();
  await repo?.remove();
});

function holdMainThread(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // The main thread busy with a first token's handling (a wave's other work, on a shared core).
  }
}

describe('first-token hand-off', () => {
  it('runs no decode step while the main thread is handling a first token', async () => {
    let running = 0;
    let startNewcomer: () => void = () => undefined;
    const runningStarted = new Promise<void>((resolve) => (startNewcomer = resolve));
    const long = generate(instance, 'a long generation in flight', { max_tokens: 300, ignore_eos: true }, {
      onPiece: (n) => {
        running = n;
        if (n === 3) startNewcomer();
      },
    });
    await runningStarted;
    let duringHold = -1;
    const newcomer = generate(instance, 'a newcomer', { max_tokens: 4, ignore_eos: true }, {
      onPiece: (n) => {
        if (n !== 1) return;
        const before = running;
        holdMainThread(HOLD_MS);
        // The long generation's tokens made during the hold reach this thread in the messages queued behind this
        // one, handled before any immediate: count them there.
        setImmediate(() => (duringHold = running - before));
      },
    });
    await newcomer;
    await long;
    // With the hand-off the engine slept through the hold: at most the step it starts once the main thread is done.
    // Without it the engine decodes on (a step of one or two rows takes a few ms): 5-20 tokens seen here.
    expect(duringHold).toBeGreaterThanOrEqual(0);
    expect(duringHold).toBeLessThanOrEqual(1);
  });

  it('counts a wait per message with a first token, none of them cut short by the cap', async () => {
    const before = (await instance.engineStats()).handoff;
    const prompts = ['one', 'two', 'three', 'four', 'five', 'six'];
    await Promise.all(prompts.map((p) => generate(instance, p, { max_tokens: 6, ignore_eos: true })));
    const after = (await instance.engineStats()).handoff;
    expect(before).toBeDefined();
    const waits = (after?.waits ?? 0) - (before?.waits ?? 0);
    // Requests arriving together are prefilled in one run and their first tokens go out in one message.
    expect(waits).toBeGreaterThanOrEqual(1);
    expect(waits).toBeLessThanOrEqual(prompts.length);
    expect((after?.timeouts ?? 0) - (before?.timeouts ?? 0)).toBe(0);
    expect(await instance.engineStats()).toMatchObject({ active: 0, waiting: 0 });
  });
});
