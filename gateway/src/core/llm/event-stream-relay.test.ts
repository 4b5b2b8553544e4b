import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../auth/index.js';
import type { GatewayMetrics, RateLimitDecision, RateLimiter, Tier } from '../ports/index.js';
import { relayEventStream, type RelayOutcome } from './event-stream-relay.js';
import { OpenAIApiError } from './openai-error.js';
import { CompletionMeter } from './token-budget.js';

const encoder = new TextEncoder();
const chunk = (text: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, text, finish_reason: null }] })}\n\n`;

/** A limiter whose bucket holds `tokens` and never refills. */
function bucket(tokens: number): RateLimiter & { taken: number } {
  const limiter = {
    taken: 0,
    async take(_key: string, n: number): Promise<RateLimitDecision> {
      const allowed = limiter.taken + n <= tokens;
      if (allowed) limiter.taken += n;
      return { allowed, retryAfterMs: allowed ? 0 : 5000, remaining: tokens - limiter.taken, limit: tokens, resetSeconds: 60 };
    },
  };
  return limiter;
}

const metrics: GatewayMetrics = { request: () => undefined, rateLimited: () => undefined, authRejected: () => undefined, render: async () => ({ contentType: '', body: '' }) };
const tier = { name: 't', llm: { tokensPerMinute: 60, tokensBurst: 1000, cacheCompletions: false } } as unknown as Tier;
const auth = { tenant: { id: 'ten', name: 'ten', tier: 't' }, tier, keyId: 'k' } as AuthContext;

/** Relays `parts` (raw upstream chunks, optionally failing after them) and returns the client's text and the outcome. */
async function relay(parts: string[], options: { fail?: boolean; budget?: number; chargeEvery?: number } = {}) {
  let aborted = false;
  let outcome: RelayOutcome | undefined;
  async function* source() {
    for (const part of parts) yield encoder.encode(part);
    if (options.fail === true) throw new Error('socket hang up');
  }
  const meter = new CompletionMeter(bucket(options.budget ?? 1_000_000), metrics, auth, 'm', options.chargeEvery ?? 1);
  const stream = relayEventStream({
    source: source(),
    format: 'openai',
    countTokens: (text) => text.split(' ').filter((w) => w !== '').length,
    meter,
    overBudgetError: (ms) => new OpenAIApiError(429, 'over budget', 'tokens', null, 'rate_limit_exceeded', ms),
    abortUpstream: () => (aborted = true),
    onEnd: (o) => (outcome = o),
  });
  const text = await new Response(stream).text();
  return { text, outcome, aborted, meter };
}

describe('relayEventStream', () => {
  it('passes whole events through unchanged, joining events split across chunks, and meters their tokens', async () => {
    const whole = chunk('one') + chunk(' two') + 'data: [DONE]\n\n';
    const { text, outcome, meter } = await relay([whole.slice(0, 10), whole.slice(10, 50), whole.slice(50)]);
    expect(text).toBe(whole);
    expect(outcome).toBe('done');
    expect(meter.total).toBe(2);
  });

  it('ends with an error event and [DONE] when the node fails mid-stream, after the events already whole', async () => {
    const { text, outcome } = await relay([chunk('one'), chunk(' two').slice(0, 12)], { fail: true });
    expect(outcome).toBe('upstream_failed');
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(events[0]).toBe(chunk('one').trim());
    expect(JSON.parse(events[1]!.slice(6)).error.code).toBe('upstream_failed');
    expect(events[2]).toBe('data: [DONE]');
  });

  it('treats an OpenAI stream ending without [DONE] as a failure', async () => {
    const { text, outcome } = await relay([chunk('one')]);
    expect(outcome).toBe('upstream_failed');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('cuts a stream over its token budget: error event, [DONE], node request aborted', async () => {
    const parts = Array.from({ length: 10 }, (_, i) => chunk(` w${i}`));
    const { text, outcome, aborted } = await relay([...parts, 'data: [DONE]\n\n'], { budget: 4, chargeEvery: 2 });
    expect(outcome).toBe('over_budget');
    expect(aborted).toBe(true);
    const events = text.split('\n\n').filter((e) => e !== '');
    // Charged a step (2) at a time in the background: the four tokens paid for, then at most a step or
    // two more before the refusal is seen, then the error and [DONE]; never the whole stream.
    const tokens = events.length - 2;
    expect(tokens).toBeGreaterThanOrEqual(4);
    expect(tokens).toBeLessThanOrEqual(4 + 2 * 2);
    expect(JSON.parse(events.at(-2)!.slice(6)).error.code).toBe('rate_limit_exceeded');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('aborts the node request when the client cancels the body', async () => {
    let aborted = false;
    let outcome: RelayOutcome | undefined;
    async function* endless() {
      for (;;) {
        yield encoder.encode(chunk(' x'));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    const stream = relayEventStream({
      source: endless(),
      format: 'openai',
      countTokens: () => 1,
      meter: new CompletionMeter(bucket(1_000_000), metrics, auth, 'm'),
      overBudgetError: () => new OpenAIApiError(429, 'x', 'tokens'),
      abortUpstream: () => (aborted = true),
      onEnd: (o) => (outcome = o),
    });
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    expect(aborted).toBe(true);
    expect(outcome).toBe('cancelled');
  });
});
