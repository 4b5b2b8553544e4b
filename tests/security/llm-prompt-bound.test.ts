/**
 * Prompt tokens admitted on a bound and settled later (gateway/src/core/llm/prompt-charge.ts) against
 * a tenant who crafts prompts to slip past its tokens-per-minute limit:
 * - prompts built to have as many tokens per byte as the tokenizer allows (rare astral characters fall
 *   apart into byte tokens; special-token text; lone surrogates) never count above their bound, and a
 *   run of them admits no more tokens than the bucket holds;
 * - a stream the client abandons before any event still settles its prompt (no charge left at the
 *   bound, none skipped), exactly once.
 * Real parts: the cl100k tokenizer, the in-process token bucket, the real relay state machine.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../gateway/src/adapters/memory/memory-rate-limiter.js';
import type { AuthContext } from '../../gateway/src/core/auth/index.js';
import { OpenAIApiError } from '../../gateway/src/core/llm/openai-error.js';
import { admitPrompt, type PromptCharge } from '../../gateway/src/core/llm/prompt-charge.js';
import { SseRelay } from '../../gateway/src/core/llm/sse-relay.js';
import { bucketKey, bucketOf, CompletionMeter } from '../../gateway/src/core/llm/token-budget.js';
import type { GatewayMetrics, Tier } from '../../gateway/src/core/ports/index.js';
import { loadCl100kCounter } from '../../shared/src/llm/cl100k-counter.js';

const BURST = 2_000;
const tier = { name: 'attacker', priority: 1, queueShare: 1, llm: { tokensPerMinute: 1, tokensBurst: BURST } } as unknown as Tier;
const auth = { tenant: { id: 'mallory', name: 'mallory', tier: 'attacker' }, tier, keyId: 'k' } as AuthContext;
const metrics: GatewayMetrics = { request: () => undefined, rateLimited: () => undefined, authRejected: () => undefined, render: async () => ({ contentType: '', body: '' }) };
// A frozen clock: nothing refills, so every admitted token shows.
const frozen = (): number => 5_000_000;

/** Prompts with as many tokens per byte as the attacker can find. */
const CRAFTED = [
  '\u{1F9FF}\u{E0041}\u{1D7D8}\u{10FFFD}'.repeat(20),
  '<|endoftext|><|im_start|><|fim_middle|>'.repeat(10),
  '\uD800\uDBFF\uDC00'.repeat(40),
  '\u0301\u0300\u0302'.repeat(50),
];

describe('a prompt crafted against the token bound', () => {
  it('never counts above its bound, and a run of them admits no more than the bucket holds', async () => {
    const counter = await loadCl100kCounter();
    for (const text of CRAFTED) expect(counter.count(text)).toBeLessThanOrEqual(counter.upperBound!(text));

    const limiter = createMemoryRateLimiter({ now: frozen });
    let admittedExact = 0;
    let refused = 0;
    const pending: { charge: PromptCharge; tokens: number }[] = [];
    for (let i = 0; i < 80; i++) {
      const text = CRAFTED[i % CRAFTED.length]!;
      try {
        const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter, setHeaders: () => undefined }, text);
        pending.push({ charge, tokens: counter.count(text) });
      } catch (error) {
        expect(error).toBeInstanceOf(OpenAIApiError);
        expect((error as OpenAIApiError).status).toBe(429);
        refused++;
      }
      // Settle every other admission late, as streams whose first event is still on its way.
      if (i % 2 === 1) for (const p of pending.splice(0)) {
        p.charge.settle();
        admittedExact += p.tokens;
      }
    }
    for (const p of pending.splice(0)) {
      p.charge.settle();
      admittedExact += p.tokens;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(refused).toBeGreaterThan(0);
    expect(admittedExact).toBeLessThanOrEqual(BURST);
    // What the bucket still holds plus what was admitted is the burst: nothing lost, nothing free.
    expect((await limiter.take(bucketKey(auth), BURST - admittedExact, bucketOf(tier)!)).allowed).toBe(true);
    expect((await limiter.take(bucketKey(auth), 1, bucketOf(tier)!)).allowed).toBe(false);
  });

  it('a stream abandoned before its first event settles its prompt exactly once', async () => {
    const counter = await loadCl100kCounter();
    const limiter = createMemoryRateLimiter({ now: frozen });
    const text = CRAFTED[0]!;
    const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter, setHeaders: () => undefined }, text);
    let settlements = 0;
    const relay = new SseRelay({
      format: 'openai',
      countTokens: (t) => counter.count(t),
      meter: new CompletionMeter(limiter, metrics, auth, 'm'),
      overBudgetError: (ms) => new OpenAIApiError(429, 'over budget', 'tokens', null, 'rate_limit_exceeded', ms),
      abortUpstream: () => undefined,
      onEnd: () => undefined,
      afterFirstWrite: () => {
        settlements++;
        charge.settle();
      },
    });
    relay.cancel(new Error('the client closed the connection'));
    relay.cancel(new Error('again'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settlements).toBe(1);
    const exact = counter.count(text);
    expect((await limiter.take(bucketKey(auth), BURST - exact, bucketOf(tier)!)).allowed).toBe(true);
    expect((await limiter.take(bucketKey(auth), 1, bucketOf(tier)!)).allowed).toBe(false);
  });
});
