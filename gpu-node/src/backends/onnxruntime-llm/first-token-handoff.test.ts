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
    let startNewcomer: () => void = () => undefined;
    const runningStarted = new Promise<void>((resolve) => (startNewcomer = resolve));
    const long = generate(instance, 'a long generation in flight', { max_tokens: 300, ignore_eos: true }, {
      onPiece: (n) => {
        if (n === 3) startNewcomer();
      },
    });
    await runningStarted;
    // Taken after the long generation's own first token: the waits from here on are the newcomer's.
    const before = (await instance.engineStats()).handoff;
    let holdEndUs = 0;
    const newcomer = generate(instance, 'a newcomer', { max_tokens: 4, ignore_eos: true }, {
      onPiece: (n) => {
        if (n !== 1) return;
        holdMainThread(HOLD_MS);
        holdEndUs = Number(process.hrtime.bigint() / 1000n);
      },
    });
    await newcomer;
    const after = (await instance.engineStats()).handoff;
    await long;
    // The engine thread is one loop: it posted the newcomer's first token and went straight to sleep in the
    // hand-off, so waking after the hold ended means no decode step ran meanwhile. Without the hand-off it does not
    // sleep at all (no wait counted). (Counting the long generation's tokens seen after the hold cannot tell this: on
    // a loaded box the main thread may be descheduled after the hold while the woken engine runs steps.)
    expect((after?.waits ?? 0) - (before?.waits ?? 0)).toBe(1);
    expect((after?.timeouts ?? 0) - (before?.timeouts ?? 0)).toBe(0);
    expect(after?.lastWakeUs ?? 0).toBeGreaterThanOrEqual(holdEndUs);
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
