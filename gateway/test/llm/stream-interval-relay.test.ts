/**
 * A node with a stream interval (--stream-interval 4: events grouped four to a write) behind the
 * gateway: the gateway writes once per read of the node's answer, so the client gets the grouped
 * events in about as few writes (HTTP/1.1 chunks) as the node made, every event intact; token metering
 * counts every streamed token (the tenant's `out` tokens are the stream's completion tokens); and a
 * stream that spends its token budget is still cut with the error event. Real redis-server, node
 * process and gateway, over HTTP/2 and raw HTTP/1.1 to the node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkedPost } from '../../../shared/test/support/index.js';
import { LLM_KEYS, ssePayloads, startLlmFleet, type LlmFleet } from '../support/llm-fleet.js';

const INTERVAL = 4;

/** A streamed completion through the gateway on a raw socket: its HTTP/1.1 chunks (one per write of the gateway). */
const chunksThrough = async (port: number, key: string, body: unknown): Promise<string[]> =>
  (await chunkedPost(port, '/v1/completions', JSON.stringify(body), [`Authorization: Bearer ${key}`])).chunks;

const outTokens = async (fleet: LlmFleet): Promise<number> => {
  const text = await (await fetch(`${fleet.gateway.url}/metrics`)).text();
  return Number(/tessera_gateway_llm_tokens_total\{tenant="llm-a",model="token_stream",direction="out"\} (\d+)/.exec(text)?.[1] ?? 0);
};

describe.each(['h2', 'raw'] as const)('a node with stream interval %d behind the gateway (node over %s)'.replace('%d', String(INTERVAL)), (upstream) => {
  let fleet: LlmFleet;

  beforeAll(async () => {
    fleet = await startLlmFleet({ upstream, tokenDelayMs: 20, nodeArgs: ['--stream-interval', String(INTERVAL), '--stream-interval-ms', '10000'] });
    // The fleet view can list the node a moment before it counts as ready (a busy box): one answer first.
    for (let tries = 0; tries < 150; tries++) {
      if ((await fleet.call(LLM_KEYS.a2, '/v1/completions', { model: 'token_stream', prompt: 'warm', max_tokens: 2 })).status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  it('grouped events leave the gateway grouped, every event intact, and every token metered', async () => {
    const before = await outTokens(fleet);
    const prompt = Array.from({ length: 40 }, () => 'apple').join(' ');
    const port = Number(new URL(fleet.gateway.url).port);
    const chunks = await chunksThrough(port, LLM_KEYS.a, { model: 'token_stream', prompt, stream: true, stream_options: { include_usage: true } });
    const payloads = ssePayloads(chunks.join(''));
    expect(payloads.at(-1)).toBe('[DONE]');
    const usage = (JSON.parse(payloads.at(-2) as string) as { usage: { completion_tokens: number } }).usage;
    const text = payloads
      .slice(0, -2)
      .map((p) => (JSON.parse(p) as { choices: { text: string }[] }).choices[0]?.text ?? '')
      .join('');
    expect(text.trim()).toBe(prompt);
    // One write per read of the node's answer: no more writes than the node made (1, then groups of 4), never one per event.
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(payloads.length / INTERVAL) + 2);
    expect(chunks.length).toBeLessThan(payloads.length / 2);
    // Metering counts the tokens inside grouped writes too.
    await expect.poll(async () => (await outTokens(fleet)) - before, { timeout: 10_000 }).toBe(usage.completion_tokens);
  });

  it('a stream that spends its token budget is still cut with the error event, then [DONE]', async () => {
    // 110 prompt tokens are charged on admission, leaving 10 of the burst of 120: the budget runs out ~100
    // tokens (~2 s at 20 ms each) before the stream's end, so the refused charge lands in time on a busy box.
    const prompt = Array.from({ length: 110 }, () => 'apple').join(' ');
    const response = await fleet.call(LLM_KEYS.metered, '/v1/completions', { model: 'token_stream', prompt, stream: true });
    expect(response.status).toBe(200);
    const payloads = ssePayloads(await response.text());
    expect(payloads.at(-1)).toBe('[DONE]');
    expect((JSON.parse(payloads.at(-2) as string) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  });
});
