import { describe, expect, it } from 'vitest';
import { llmTenant as auth, silentMetrics as metrics, unlimitedLimiter as unlimited } from '../../../test/support/relay-fixtures.js';
import { OpenAIApiError } from './openai-error.js';
import { SseRelay, type RelayOutcome } from './sse-relay.js';
import { CompletionMeter } from './token-budget.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const event = (text: string): string => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, text, finish_reason: null }] })}\n\n`;

function relay(): { relay: SseRelay; counted: string[]; meter: CompletionMeter; outcome: () => RelayOutcome | undefined } {
  const counted: string[] = [];
  let outcome: RelayOutcome | undefined;
  const meter = new CompletionMeter(unlimited, metrics, auth, 'm', 1_000);
  const r = new SseRelay({
    format: 'openai',
    countTokens: (text) => {
      counted.push(text);
      return text.split(' ').filter((w) => w !== '').length;
    },
    meter,
    overBudgetError: (ms) => new OpenAIApiError(429, 'over budget', 'tokens', null, 'rate_limit_exceeded', ms),
    abortUpstream: () => undefined,
    onEnd: (o) => (outcome = o),
  });
  return { relay: r, counted, meter, outcome: () => outcome };
}

describe('SseRelay metering after the write', () => {
  it('hands out an event before counting its tokens; meterSent counts it, once', () => {
    const { relay: r, counted, meter } = relay();
    const out = r.push(encoder.encode(event('one two')));
    expect(decoder.decode(out)).toBe(event('one two'));
    // Nothing counted yet: the first event (which learns the stream's template) is not held back by it.
    expect(counted).toEqual([]);
    r.meterSent();
    expect(counted).toEqual(['one two']);
    expect(meter.total).toBe(2);
    r.meterSent();
    expect(meter.total).toBe(2);
  });

  it('counts every event even when the driver never calls meterSent: at the next push and at the end', () => {
    const { relay: r, meter, outcome } = relay();
    r.push(encoder.encode(event('one')));
    r.push(encoder.encode(event(' two three')));
    expect(meter.total).toBe(1);
    // `[DONE]` is only seen by counting: the end must count first, or a complete stream reads as cut.
    r.push(encoder.encode('data: [DONE]\n\n'));
    expect(r.end()).toBeUndefined();
    expect(outcome()).toBe('done');
    expect(meter.total).toBe(3);
  });

  it('counts what was handed out before a failure ends the stream', () => {
    const { relay: r, meter, outcome } = relay();
    r.push(encoder.encode(event('one two')));
    const last = r.fail();
    expect(decoder.decode(last)).toContain('upstream_failed');
    expect(outcome()).toBe('upstream_failed');
    expect(meter.total).toBe(2);
  });
});

describe('SseRelay afterFirstWrite (the prompt\'s settlement)', () => {
  function withHook(): { relay: SseRelay; calls: () => number } {
    let calls = 0;
    const r = new SseRelay({
      format: 'openai',
      countTokens: () => 1,
      meter: new CompletionMeter(unlimited, metrics, auth, 'm', 1_000),
      overBudgetError: (ms) => new OpenAIApiError(429, 'over budget', 'tokens', null, 'rate_limit_exceeded', ms),
      abortUpstream: () => undefined,
      onEnd: () => undefined,
      afterFirstWrite: () => calls++,
    });
    return { relay: r, calls: () => calls };
  }

  it('runs once, after the first event is written, not before', () => {
    const { relay: r, calls } = withHook();
    r.push(encoder.encode(event('one')));
    expect(calls()).toBe(0);
    r.meterSent();
    expect(calls()).toBe(1);
    r.push(encoder.encode(event('two')));
    r.meterSent();
    r.push(encoder.encode('data: [DONE]\n\n'));
    r.end();
    expect(calls()).toBe(1);
  });

  it('runs at the end of a stream that wrote nothing', () => {
    const { relay: r, calls } = withHook();
    r.push(encoder.encode('data: {"partial'));
    expect(r.fail()).toBeDefined();
    expect(calls()).toBe(1);
  });
});
