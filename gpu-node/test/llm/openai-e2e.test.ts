/**
 * The OpenAI-compatible API end to end: the official `openai` npm client (baseURL = the node's /v1)
 * against a real `tessera-node` process serving the example decoupled `token_stream`, streaming and
 * not, plus raw checks of the SSE framing and of cancellation when the client goes away mid-stream.
 * Usage figures are checked against the same tokenizer (gpt-tokenizer, cl100k_base), counted here.
 */
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, type NodeProcess } from '../../../tests/security/support/node-process.js';
import { TOKEN_STREAM_CHAT_TEMPLATE } from '../../src/example-models/index.js';
import { removeDir } from '../support.js';
import { eventually, llmRepository, longPrompt, type LlmRepository } from './support.js';

let node: NodeProcess;
let repo: LlmRepository;
let client: OpenAI;

beforeAll(async () => {
  // A long context, so the cancellation test can ask for a long stream.
  repo = await llmRepository({ contextLength: 100_000 });
  node = await startNodeProcess(repo.dir);
  client = new OpenAI({ baseURL: `${node.http}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

const tokens = (text: string) => encode(text).length;

/** What token_stream answers to a chat: its prompt, the chat template rendered, echoed back. */
function rendered(messages: readonly { role: string; content: string }[]): string {
  const [head = '', rest = ''] = TOKEN_STREAM_CHAT_TEMPLATE.split('{% for message in messages %}');
  const [body = '', tail = ''] = rest.split('{% endfor %}');
  return head + messages.map((m) => body.replace('{{ message.role }}', m.role).replace('{{ message.content }}', m.content)).join('') + tail;
}

describe('models', () => {
  it('lists the models with the vLLM-style I/O', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['token_stream']);
    expect((await client.models.retrieve('token_stream')).id).toBe('token_stream');
  });
});

describe('completions', () => {
  it('answers at once with the text, finish_reason and usage counted by the tokenizer', async () => {
    const prompt = 'alpha beta gamma';
    const completion = await client.completions.create({ model: 'token_stream', prompt, max_tokens: 10, temperature: 0.5, top_p: 0.9, seed: 7 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]).toMatchObject({ index: 0, text: prompt, finish_reason: 'stop' });
    expect(completion.usage).toEqual({ prompt_tokens: tokens(prompt), completion_tokens: tokens(prompt), total_tokens: 2 * tokens(prompt) });
  });

  it('honours max_tokens (finish_reason length) and stop', async () => {
    const limited = await client.completions.create({ model: 'token_stream', prompt: 'one two three four', max_tokens: 2 });
    expect(limited.choices[0]).toMatchObject({ text: 'one two', finish_reason: 'length' });
    const stopped = await client.completions.create({ model: 'token_stream', prompt: 'one two three four', stop: [' three'] });
    expect(stopped.choices[0]).toMatchObject({ text: 'one two', finish_reason: 'stop' });
  });

  it('streams the pieces as they come, then a chunk with finish_reason', async () => {
    const stream = await client.completions.create({ model: 'token_stream', prompt: 'red green blue', stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.text)).toEqual(['red', ' green', ' blue', '']);
    expect(chunks.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, null, 'stop']);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });
});

describe('chat completions', () => {
  const messages = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'hello there' },
  ];

  it('renders the chat template into the prompt and answers with an assistant message and usage', async () => {
    const chat = await client.chat.completions.create({ model: 'token_stream', messages });
    const prompt = rendered(messages);
    expect(chat.object).toBe('chat.completion');
    expect(chat.choices[0]?.message).toMatchObject({ role: 'assistant', content: prompt });
    expect(chat.choices[0]?.finish_reason).toBe('stop');
    expect(chat.usage).toMatchObject({ prompt_tokens: tokens(prompt), completion_tokens: tokens(prompt) });
  });

  it('streams deltas (role first), finish_reason, and usage with stream_options.include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'token_stream',
      messages: [{ role: 'user', content: 'a b c' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe(rendered([{ role: 'user', content: 'a b c' }]));
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(tokens(content));
  });

  it('refuses n > 1 and unknown models with OpenAI errors', async () => {
    const n = await client.chat.completions.create({ model: 'token_stream', messages, n: 2 }).catch((e: unknown) => e);
    expect(n).toBeInstanceOf(OpenAI.BadRequestError);
    expect((n as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
    const missing = await client.chat.completions.create({ model: 'nope', messages }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('a client that stops reading and aborts mid-stream stops the model', async () => {
    const before = (await repo.cancellations()).length;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'token_stream', messages: [{ role: 'user', content: longPrompt(5000) }], stream: true },
      { signal: controller.signal },
    );
    let seen = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) seen += 1;
      if (seen === 3) break; // leaving the loop aborts the request
    }
    controller.abort();
    expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
    const sent = Number(/^cancelled (\d+)$/.exec((await repo.cancellations())[before] ?? '')?.[1]);
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(sent).toBeLessThan(5000);
  });
});

describe('raw SSE framing', () => {
  it('every event is `data: <json>` and a blank line; the stream ends with data: [DONE]', async () => {
    const res = await fetch(`${node.http}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'token_stream', prompt: 'x y', stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text.split('\n\n').slice(0, -1);
    expect(events.every((e) => e.startsWith('data: ') && !e.includes('\n'))).toBe(true);
    const payloads = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)) as { choices: { text: string }[] });
    expect(payloads.map((p) => p.choices[0]?.text)).toEqual(['x', ' y', '']);
  });
});
