import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../auth/index.js';
import type { GatewayMetrics, LlmUpstream, LlmUpstreamRequest, NodeView, RateLimiter, Tier } from '../ports/index.js';
import { forwardLlm, type LlmForwardRequest } from './llm-forward.js';
import type { LlmRouter } from './llm-router.js';

// Ports filled in-process: what is under test is which signal forwardLlm hands the upstream, and what
// stops it (the real relay, node and gateway run in gateway/test/llm/native-llm-relay.test.ts).
const metrics: GatewayMetrics = { request: () => undefined, rateLimited: () => undefined, authRejected: () => undefined, render: async () => ({ contentType: '', body: '' }) };
const limiter: RateLimiter = { take: async () => ({ allowed: true, retryAfterMs: 0, remaining: 1, limit: 1, resetSeconds: 0 }) };
const tier = { name: 't', priority: 1, queueShare: 1 } as unknown as Tier;
const auth = { tenant: { id: 'ten', name: 'ten', tier: 't' }, tier, keyId: 'k' } as AuthContext;
const node = { id: 'n1' } as NodeView;
const router = { acquire: async () => ({ node, release: () => undefined }) } as unknown as LlmRouter;

function upstreamRecording(): LlmUpstream & { requests: LlmUpstreamRequest[] } {
  const requests: LlmUpstreamRequest[] = [];
  return {
    requests,
    async send(_node, request) {
      requests.push(request);
      const body = (async function* () {
        yield new TextEncoder().encode('data: {"choices":[{"index":0,"text":"a","finish_reason":null}]}\n\n');
      })();
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
    },
  };
}

function forwarding(upstream: LlmUpstream, signal: AbortSignal, abort?: () => void) {
  const request: LlmForwardRequest = {
    auth, model: 'm', path: '/v1/completions', body: new Uint8Array(), stream: true, format: 'openai', deadline: Date.now() + 10_000, signal,
    ...(abort === undefined ? {} : { abort }),
  };
  return forwardLlm({ router, upstream, rateLimiter: limiter, metrics, counter: { count: () => 1 }, answerTimeoutMs: 1000 }, request);
}

describe('forwardLlm: what aborts the node\'s request', () => {
  it('rides on the client\'s own signal when the caller can abort it, and a relay that stops aborts that one', async () => {
    const upstream = upstreamRecording();
    const client = new AbortController();
    let aborts = 0;
    const answer = await forwarding(upstream, client.signal, () => {
      aborts++;
      client.abort();
    });
    expect(upstream.requests[0]!.signal).toBe(client.signal);
    if (answer.kind !== 'stream') throw new Error('expected a stream');
    answer.relay.cancel(new Error('the client closed the connection'));
    expect(aborts).toBe(1);
    expect(client.signal.aborted).toBe(true);
  });

  it('makes a signal of its own that follows the client\'s when the caller cannot abort it', async () => {
    const upstream = upstreamRecording();
    const client = new AbortController();
    const answer = await forwarding(upstream, client.signal);
    const sent = upstream.requests[0]!.signal;
    expect(sent).not.toBe(client.signal);
    expect(sent.aborted).toBe(false);
    client.abort();
    expect(sent.aborted).toBe(true);
    if (answer.kind !== 'stream') throw new Error('expected a stream');
    answer.relay.cancel();
  });
});
