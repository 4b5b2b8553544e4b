/**
 * LLM streams through the gateway when things go wrong: a real redis-server, a real node process
 * (`token_stream`) and a real gateway that lets one stream per node run at once.
 * - Admission: a second stream waits in the gateway's queue; past its deadline it gets 503 with
 *   Retry-After in OpenAI's shape (the infer path's queue-timeout rule).
 * - The node dies mid-stream: the client's stream ends with an error event then `data: [DONE]`, and
 *   the gateway keeps nothing of it (no stream counted in flight on the node).
 * With the node's LLM routes reached over HTTP/2 (its --llm-h2c-port), HTTP/1.1, and raw HTTP/1.1 writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEADLINE_HEADER } from '../../../shared/src/fleet/request-headers.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { LLM_FRONTS, LLM_KEYS, longPrompt, ssePayloads, startLlmFleet, type LlmFleet } from '../support/llm-fleet.js';

const CASES = (['h2', 'http1', 'raw'] as const).flatMap((upstream) => LLM_FRONTS.map((front) => [upstream, front] as const));

describe.each(CASES)('LLM streams through the gateway (node over %s, %s front door): queue timeout and a node dying mid-stream', (upstream, front) => {
  let fleet: LlmFleet;

  beforeAll(async () => {
    fleet = await startLlmFleet({ tokenDelayMs: 5, maxStreamsPerNode: 1, upstream, front });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  const startStream = async (words: number) => {
    const response = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: longPrompt(words), stream: true });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    return { reader, first: new TextDecoder().decode(first.value) };
  };

  it('a stream that cannot get a node before its deadline is refused with 503 and Retry-After', async () => {
    const running = await startStream(1000);
    const waiting = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: 'hi', stream: true }, { headers: { [DEADLINE_HEADER]: '300' } });
    expect(waiting.status).toBe(503);
    expect(Number(waiting.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await waiting.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('server_error');
    await running.reader.cancel();
    // With the first stream gone, the node is free again.
    const after = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: 'hi again', stream: true });
    expect(after.status).toBe(200);
    expect(ssePayloads(await after.text()).at(-1)).toBe('[DONE]');
  });

  it('a node dying mid-stream ends the client\'s stream with an error event, then [DONE], and nothing stays counted', async () => {
    const { reader, first } = await startStream(1000);
    fleet.node.process.kill('SIGKILL');
    let text = first;
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const payloads = ssePayloads(text);
    expect(payloads.at(-1)).toBe('[DONE]');
    const error = (JSON.parse(payloads.at(-2)!) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('upstream_failed');
    expect(error.message).toMatch(/mid-stream/);
    // The stream's claim on the node is released (or the node is gone from the fleet view altogether).
    await waitFor(() => fleet.gateway.directory.all().every((node) => node.localInflight === 0), { what: 'no stream left in flight', timeoutMs: 10_000 });
  });
});
