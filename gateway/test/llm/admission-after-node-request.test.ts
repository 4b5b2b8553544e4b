/**
 * A streamed request's limits (request rate, prompt tokens) are decided after its node request is sent
 * (llm-service.ts's admission overlap): their CPU no longer sits before the node's request leaves. What must not
 * change: a refusal is still the answer (a 429, nothing of the stream), the node's request is cancelled, and an
 * allowed stream is charged and relayed as before. Real parts: the gateway's core (createDirectLlm), its raw
 * HTTP/1.1 upstream, the LLM router over a static directory, the in-memory tenant store and rate limiter, and the
 * SSE node double on loopback. The order is read from calls in this process, so no timing decides it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { loadTokenCounter } from '../../../shared/src/llm/token-counter.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { createLlmRawUpstream } from '../../src/adapters/node-http/llm-raw-upstream.js';
import { createStaticNodeDirectory } from '../../src/adapters/fleet/static-node-directory.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../../src/adapters/memory/index.js';
import { createPromMetrics } from '../../src/adapters/metrics/prom-metrics.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { seedTenants } from '../../src/core/auth/seed-tenants.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { createDirectLlm, type DirectLlmAnswer } from '../../src/core/llm/direct-llm.js';
import { LlmRouter } from '../../src/core/llm/llm-router.js';
import type { LlmUpstream, RateLimiter } from '../../src/core/ports/index.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble } from '../support/sse-node-double.js';

const KEY = 'tsk_after_send';
/** A tenant whose token burst is smaller than the prompt below: its stream is refused. */
const SMALL_KEY = 'tsk_after_send_small';

describe('a streamed request\'s limits are decided after its node request is sent', () => {
  let double: SseNodeDouble;
  let serve: ReturnType<typeof createDirectLlm>;
  const order: string[] = [];
  let upstream: ReturnType<typeof createLlmRawUpstream>;
  let router: LlmRouter;

  beforeAll(async () => {
    // The stream stays open after its first event (a long gap), so a cancellation is the gateway's doing.
    double = await startSseNodeDouble({ pieces: [openAIChunk('a'), openAIChunk('b'), 'data: [DONE]\n\n'], gapMs: 60_000 });
    const tier = (burst: number): Record<string, unknown> => ({
      priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'],
      // A request rate too: its take is the first thing admission does.
      rateLimits: { requestsPerSecond: 1000, burst: 1000, elementsPerSecond: 0, elementsBurst: 0 },
      llm: { tokensPerMinute: 1, tokensBurst: burst },
    });
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { metered: tier(10_000), small: tier(3) },
        tenants: [
          { id: 'after-send', tier: 'metered', keys: [{ id: 'a1', hash: await sha256Hex(KEY) }] },
          { id: 'after-send-small', tier: 'small', keys: [{ id: 's1', hash: await sha256Hex(SMALL_KEY) }] },
        ],
      }),
    );
    const tenants = createMemoryTenantStore();
    await seedTenants(tenants, config.tenants, Date.now());
    const limiter = createMemoryRateLimiter();
    const rateLimiter: RateLimiter = {
      take: (tenant, elements, limits) => {
        order.push('limits asked');
        return limiter.take(tenant, elements, limits);
      },
    };
    upstream = createLlmRawUpstream();
    const recording: LlmUpstream = {
      send: (node, request) => {
        const sent = upstream.send(node, request);
        order.push('node request sent');
        return sent;
      },
    };
    router = new LlmRouter({ directory: createStaticNodeDirectory([{ id: 'double', httpAddress: double.address }]) });
    serve = createDirectLlm({
      config, tenants, rateLimiter, metrics: createPromMetrics(), logger: silentLogger, now: Date.now,
      llm: { router, upstream: recording, tokenCounter: () => loadTokenCounter('cl100k_base') },
    });
  });

  afterAll(async () => {
    router?.close();
    upstream?.close();
    await double?.close();
  });

  function stream(key: string): { answer: Promise<DirectLlmAnswer>; client: AbortController } {
    const client = new AbortController();
    const body = new TextEncoder().encode(JSON.stringify({ model: 'm', prompt: 'tell me a story about a gateway', stream: true }));
    const headers = new Map([['authorization', `Bearer ${key}`], ['content-type', 'application/json']]);
    const answer = serve(
      { path: '/v1/completions', headers: { get: (name) => headers.get(name.toLowerCase()) ?? null }, readBody: async () => body, signal: client.signal, abort: () => client.abort() },
      { kind: 'completion' },
    );
    return { answer, client };
  }

  it('sends the node its request first, then asks the limits; the allowed stream relays its first event and is charged', async () => {
    order.length = 0;
    const { answer, client } = stream(KEY);
    const got = await answer;
    expect(got.status).toBe(200);
    // Fails when the limits are asked before the send: ['limits asked', 'node request sent', ...].
    expect(order[0]).toBe('node request sent');
    expect(order.slice(1)).toContain('limits asked');
    // The decision's headers still reach the answer (they are set before the stream starts).
    expect(got.headers['x-ratelimit-limit-tokens']).toBe('10000');
    const source = got.stream!.source[Symbol.asyncIterator]();
    let events = '';
    while (!events.includes('"text":"a"')) {
      const read = await source.next();
      expect(read.done).toBe(false);
      const out = got.stream!.relay.push(read.value as Uint8Array);
      if (out !== undefined) events += Buffer.from(out).toString('utf8');
    }
    expect(events).toBe(openAIChunk('a'));
    got.stream!.relay.cancel(new Error('the test is over'));
    client.abort();
    await source.return?.();
  });

  it('still refuses an over-budget prompt after sending: a 429, no stream, and the node\'s request cancelled', async () => {
    order.length = 0;
    const cancelledBefore = double.cancelled;
    const { answer } = stream(SMALL_KEY);
    const got = await answer;
    expect(order[0]).toBe('node request sent');
    expect(got.status).toBe(429);
    expect(got.stream).toBeUndefined();
    expect(String(got.body)).toContain('rate_limit_exceeded');
    await waitFor(() => double.cancelled > cancelledBefore, { what: 'the node request cancelled', timeoutMs: 10_000 });
  });
});
