/**
 * The gateway's LLM routes against hostile tenants (issue 20 item 5): a real redis-server, a real node
 * process (`token_stream` and `token_stream_b`) and a real gateway.
 * - Tenant isolation: A cannot list, call or stream B's model (the same 404 as a model that does not
 *   exist, so nothing about B leaks), and cannot read B's cached completion of the same body.
 * - Bad input: OpenAI-style error objects with the right status, before any node is involved.
 * - Token limits: a prompt over the tier's budget gets 429 up front (OpenAI's error, retry-after);
 *   a stream that spends the budget ends with an error event then `data: [DONE]`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM_FRONTS, LLM_KEYS, longPrompt, ssePayloads, startLlmFleet, type LlmFleet } from '../../gateway/test/support/llm-fleet.js';

interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

describe.each(LLM_FRONTS)('gateway LLM routes: tenants, bad input and token limits (%s front door)', (front) => {
  let fleet: LlmFleet;

  beforeAll(async () => {
    fleet = await startLlmFleet({ front });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  const errorOf = async (response: Response): Promise<OpenAIErrorBody['error']> => {
    const body = (await response.json()) as OpenAIErrorBody;
    expect(typeof body.error.message).toBe('string');
    expect(typeof body.error.type).toBe('string');
    return body.error;
  };

  describe('tenant isolation', () => {
    it('A does not see B\'s model, and B\'s model answers A exactly as a model that does not exist', async () => {
      const models = (await (await fleet.call(LLM_KEYS.a, '/v1/models')).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).not.toContain('token_stream_b');
      const direct = await fleet.call(LLM_KEYS.a, '/v1/models/token_stream_b');
      expect(direct.status).toBe(404);
      const forbidden = await fleet.call(LLM_KEYS.a, '/v1/chat/completions', { model: 'token_stream_b', messages: [{ role: 'user', content: 'hi' }] });
      const missing = await fleet.call(LLM_KEYS.a, '/v1/chat/completions', { model: 'no_such_model', messages: [{ role: 'user', content: 'hi' }] });
      expect(forbidden.status).toBe(404);
      expect(missing.status).toBe(404);
      const [f, m] = [await errorOf(forbidden), await errorOf(missing)];
      expect(f.code).toBe('model_not_found');
      expect(f.message.replace('token_stream_b', 'X')).toBe(m.message.replace('no_such_model', 'X'));
      // Streaming and Triton's generate are closed to A too.
      expect((await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream_b', prompt: 'hi', stream: true })).status).toBe(404);
      expect((await fleet.call(LLM_KEYS.a, '/v2/models/token_stream_b/generate_stream', { text_input: 'hi', stream: true })).status).toBe(403);
    });

    it('A cannot read B\'s cached completion of the same body', async () => {
      const body = { model: 'token_stream_b', prompt: 'secret of tenant b', temperature: 0 };
      expect((await fleet.call(LLM_KEYS.b, '/v1/completions', body)).headers.get('x-cache')).toBe('MISS');
      expect((await fleet.call(LLM_KEYS.b, '/v1/completions', body)).headers.get('x-cache')).toBe('HIT');
      const a = await fleet.call(LLM_KEYS.a, '/v1/completions', body);
      expect(a.status).toBe(404);
      expect(await a.text()).not.toContain('secret of tenant b');
    });

    it('refuses a missing or unknown key with OpenAI\'s 401', async () => {
      const none = await fetch(`${fleet.gateway.url}/v1/models`);
      expect(none.status).toBe(401);
      expect((await errorOf(none)).code).toBe('missing_api_key');
      const client = new OpenAI({ baseURL: `${fleet.gateway.url}/v1`, apiKey: 'tsk_not-a-key', maxRetries: 0 });
      await expect(client.models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    });
  });

  describe('bad input', () => {
    const chat = (body: unknown, key: string = LLM_KEYS.a) => fleet.call(key, '/v1/chat/completions', body);

    it.each([
      ['malformed messages', { model: 'token_stream', messages: [{ role: 'wizard', content: 'hi' }] }, 'messages'],
      ['messages not a list', { model: 'token_stream', messages: 'hi' }, 'messages'],
      ['non-text parts', { model: 'token_stream', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'x' }] }] }, 'messages'],
      ['n > 1', { model: 'token_stream', messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n'],
      ['negative max_tokens', { model: 'token_stream', messages: [{ role: 'user', content: 'hi' }], max_tokens: -5 }, 'max_tokens'],
      ['temperature out of range', { model: 'token_stream', messages: [{ role: 'user', content: 'hi' }], temperature: 9 }, 'temperature'],
      ['no model', { messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    ])('%s -> 400 naming the field', async (_name, body, param) => {
      const response = await chat(body);
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
    });

    it('a body that is not JSON -> 400', async () => {
      const response = await fleet.call(LLM_KEYS.a, '/v1/completions', '{"model": "token_stream", ');
      expect(response.status).toBe(400);
      expect((await errorOf(response)).type).toBe('invalid_request_error');
    });

    it('a body over the tier\'s largest request -> 413 in OpenAI\'s shape', async () => {
      const response = await chat({ model: 'token_stream', messages: [{ role: 'user', content: 'x'.repeat(10_000) }] }, LLM_KEYS.small);
      expect(response.status).toBe(413);
      expect((await errorOf(response)).message).toMatch(/4096 bytes/);
    });

    it('a prompt over the model\'s context length -> 400 context_length_exceeded from the node, relayed', async () => {
      const response = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: longPrompt(3000), stream: true });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).code).toBe('context_length_exceeded');
    });

    it('the official client sees these as typed errors', async () => {
      const client = new OpenAI({ baseURL: `${fleet.gateway.url}/v1`, apiKey: LLM_KEYS.a, maxRetries: 0 });
      await expect(client.chat.completions.create({ model: 'token_stream', messages: [{ role: 'user', content: 'hi' }], n: 3 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });
  });

  describe('token limits (tier llm-metered: 120 tokens per minute)', () => {
    it('a prompt larger than the whole budget -> 429 up front, OpenAI\'s error, no node work', async () => {
      const response = await fleet.call(LLM_KEYS.metered, '/v1/completions', { model: 'token_stream', prompt: longPrompt(100) });
      expect(response.status).toBe(429);
      const error = await errorOf(response);
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.type).toBe('tokens');
      expect(error.message).toMatch(/Limit 120/);
    });

    it('a stream that spends the budget ends with an error event, then [DONE]; the next request gets 429 with retry-after', async () => {
      // " apple" is one token: 80 prompt tokens charged on admission leave 40, and the 80 streamed back
      // (charged 4 at a time) run out about half way.
      const prompt = Array.from({ length: 80 }, () => 'apple').join(' ');
      const response = await fleet.call(LLM_KEYS.metered, '/v1/completions', { model: 'token_stream', prompt, stream: true });
      expect(response.status).toBe(200);
      const payloads = ssePayloads(await response.text());
      const ended = payloads.some((p) => p.includes('"error"')) ? payloads : undefined;
      expect(ended).toBeDefined();
      expect(ended!.at(-1)).toBe('[DONE]');
      const error = (JSON.parse(ended!.at(-2)!) as OpenAIErrorBody).error;
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.message).toMatch(/tokens per min/);
      // The tokens streamed before the cut are fewer than the prompt's words: the stream was cut.
      const streamed = ended!.slice(0, -2).map((p) => (JSON.parse(p) as { choices: { text: string }[] }).choices[0]!.text).join('');
      expect(streamed.length).toBeLessThan(prompt.length);
      const next = await fleet.call(LLM_KEYS.metered, '/v1/completions', { model: 'token_stream', prompt: prompt.slice(0, 6 * 30) });
      expect(next.status).toBe(429);
      expect(Number(next.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(next.headers.get('x-ratelimit-limit-tokens')).toBe('120');
    });
  });
});
