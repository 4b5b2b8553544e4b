/**
 * LLM serving through the gateway end to end: a real redis-server, a real node process serving the
 * `token_stream` example model (it streams its prompt back, token by token) and a real gateway. The
 * client is the official `openai` npm package (baseURL = the gateway, apiKey = the tenant key), plus
 * raw fetches where the exact SSE framing is the point. Both with the node's LLM routes reached over
 * HTTP/2 (its --llm-h2c-port), over HTTP/1.1 (a node without that port) and over the gateway's raw
 * HTTP/1.1 writes (llm-raw-upstream.ts); each with the client's requests read by the raw HTTP/1.1 front door
 * (llm-raw-front.ts) and by node:http (native-llm.ts).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../shared/test/support/index.js';
import { LLM_FRONTS, LLM_KEYS, longPrompt, ssePayloads, startLlmFleet, type LlmFleet } from '../support/llm-fleet.js';

const CASES = (['h2', 'http1', 'raw'] as const).flatMap((upstream) => LLM_FRONTS.map((front) => [upstream, front] as const));

describe.each(CASES)('LLM routes through the gateway (redis + token_stream node over %s + gateway, %s front door)', (upstream, front) => {
  let fleet: LlmFleet;
  let client: OpenAI;

  beforeAll(async () => {
    fleet = await startLlmFleet({ upstream, front });
    client = new OpenAI({ baseURL: `${fleet.gateway.url}/v1`, apiKey: LLM_KEYS.a, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  it('answers a chat completion through the official client, with usage', async () => {
    const answer = await client.chat.completions.create({ model: 'token_stream', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 64 });
    expect(answer.object).toBe('chat.completion');
    // token_stream echoes its prompt: the chat template's rendering of the messages.
    expect(answer.choices[0]!.message.content).toContain('hello there');
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(answer.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('streams a chat completion through the official client: the deltas join into the whole answer', async () => {
    const whole = await client.chat.completions.create({ model: 'token_stream', messages: [{ role: 'user', content: 'one two three four five' }] });
    const stream = await client.chat.completions.create({
      model: 'token_stream',
      messages: [{ role: 'user', content: 'one two three four five' }],
      stream: true,
    });
    let text = '';
    let chunks = 0;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(chunks).toBeGreaterThan(5); // one chunk per token, not one buffered answer
    expect(finish).toBe('stop');
  });

  it('answers and streams legacy completions through the official client', async () => {
    const answer = await client.completions.create({ model: 'token_stream', prompt: 'alpha beta gamma' });
    expect(answer.choices[0]!.text).toBe('alpha beta gamma');
    const stream = await client.completions.create({ model: 'token_stream', prompt: 'alpha beta gamma', stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.text ?? '');
    expect(pieces.join('')).toBe('alpha beta gamma');
    expect(pieces.filter((p) => p !== '')).toEqual(['alpha', ' beta', ' gamma']);
  });

  it('relays the exact SSE framing: one `data: <json>` event per token, then `data: [DONE]`', async () => {
    const response = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: 'x y z', stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).toMatch(/^(data: [^\n]+\n\n)+$/);
    const payloads = ssePayloads(text);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as { object: string; choices: { text: string }[] });
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe('x y z');
  });

  it('serves generate and generate_stream (Triton framing, no [DONE])', async () => {
    const one = await fleet.call(LLM_KEYS.a, '/v2/models/token_stream/generate', { text_input: 'red green blue', stream: false });
    expect(one.status).toBe(200);
    expect(((await one.json()) as { text_output: string }).text_output).toContain('red green blue');
    const streamed = await fleet.call(LLM_KEYS.a, '/v2/models/token_stream/generate_stream', { text_input: 'red green blue', stream: true, exclude_input_in_output: true });
    expect(streamed.status).toBe(200);
    const payloads = ssePayloads(await streamed.text()).map((p) => JSON.parse(p) as { model_name: string; text_output: string });
    expect(payloads.map((p) => p.text_output)).toEqual(['red', ' green', ' blue']);
    expect(payloads.every((p) => p.model_name === 'token_stream')).toBe(true);
  });

  it('sends the first event before the stream is over (no buffering)', async () => {
    const response = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: longPrompt(300), stream: true });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    const text = new TextDecoder().decode(first.value);
    expect(text.startsWith('data: {')).toBe(true);
    expect(text).not.toContain('[DONE]'); // 300 tokens at 2 ms each: the stream is far from over
    await reader.cancel();
  });

  it('lists only the tenant\'s own models on /v1/models', async () => {
    const a = await client.models.list();
    expect(a.data.map((m) => m.id)).toEqual(['token_stream']);
    const b = new OpenAI({ baseURL: `${fleet.gateway.url}/v1`, apiKey: LLM_KEYS.b, maxRetries: 0 });
    expect((await b.models.list()).data.map((m) => m.id)).toEqual(['token_stream_b']);
  });

  it('closing the client mid-stream cancels the model on the node', async () => {
    const before = (await fleet.repository.cancellations()).length;
    const abort = new AbortController();
    const stream = await client.completions.create({ model: 'token_stream', prompt: longPrompt(1000), stream: true }, { signal: abort.signal });
    let seen = 0;
    try {
      for await (const chunk of stream) {
        seen += chunk.choices[0]?.text === undefined ? 0 : 1;
        if (seen === 3) abort.abort(); // the client goes away mid-stream
      }
    } catch {
      // the client's own abort surfaces here or ends the iteration; either way it stopped reading
    }
    expect(seen).toBeGreaterThanOrEqual(3);
    // The model logs `cancelled <tokens sent>` when it saw its signal: it stopped well before 1000 tokens.
    const lines = await waitFor(async () => {
      const now = await fleet.repository.cancellations();
      return now.length > before ? now : undefined;
    }, { what: 'the model to see its cancellation', timeoutMs: 20_000 });
    const sent = Number(/cancelled (\d+)/.exec(lines.at(-1)!)?.[1]);
    expect(sent).toBeLessThan(1000);
  });

  it('caches a deterministic completion (temperature 0) per tenant; sampled ones never', async () => {
    const body = { model: 'token_stream', prompt: 'cache me please', temperature: 0, max_tokens: 8 };
    const first = await fleet.call(LLM_KEYS.a, '/v1/completions', body);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const firstBody = await first.text();
    const again = await fleet.call(LLM_KEYS.a, '/v1/completions', body);
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(await again.text()).toBe(firstBody);
    // Another tenant with the same tier and model sends the same body: never A's entry.
    const other = await fleet.call(LLM_KEYS.a2, '/v1/completions', body);
    expect(other.headers.get('x-cache')).toBe('MISS');
    // Sampled (no temperature: the engine's default samples; or above 0): sent to the node every time.
    for (const sampled of [{ ...body, temperature: 0.7 }, { model: 'token_stream', prompt: 'cache me please', max_tokens: 8 }]) {
      expect((await fleet.call(LLM_KEYS.a, '/v1/completions', sampled)).headers.get('x-cache')).toBe('BYPASS');
      expect((await fleet.call(LLM_KEYS.a, '/v1/completions', sampled)).headers.get('x-cache')).toBe('BYPASS');
    }
  });

  it('meters tokens in and out per tenant and model in /metrics', async () => {
    await client.completions.create({ model: 'token_stream', prompt: 'count these tokens', stream: false });
    const text = await (await fetch(`${fleet.gateway.url}/metrics`)).text();
    const value = (direction: string) =>
      Number(new RegExp(`tessera_gateway_llm_tokens_total\\{tenant="llm-a",model="token_stream",direction="${direction}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    expect(value('in')).toBeGreaterThan(0);
    expect(value('out')).toBeGreaterThan(0);
  });
});
