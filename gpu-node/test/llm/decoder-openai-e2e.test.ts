/**
 * tiny_decoder (onnxruntime_llm, continuous batching) through a real `tessera-node` process and the
 * official `openai` client: completions streamed and not, chat, stop strings and seeded sampling, and
 * the same text from the node's generate route. Greedy answers are deterministic, so the client's text
 * can be checked against the generate route's exactly.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, type NodeProcess } from '../../../tests/security/support/node-process.js';
import { exampleRepository, removeDir } from '../support.js';

let node: NodeProcess;
let dir: string;
let client: OpenAI;

beforeAll(async () => {
  dir = await exampleRepository(['tiny_decoder']);
  node = await startNodeProcess(dir);
  client = new OpenAI({ baseURL: `${node.http}/v1`, apiKey: 'unused', maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(dir);
});

async function generateRoute(prompt: string, sampling: object): Promise<string> {
  const res = await fetch(`${node.http}/v2/models/tiny_decoder/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text_input: prompt, exclude_input_in_output: true, sampling_parameters: JSON.stringify(sampling) }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { text_output: string }).text_output;
}

describe('tiny_decoder through the OpenAI API', () => {
  it('is listed', async () => {
    expect((await client.models.list()).data.map((m) => m.id)).toContain('tiny_decoder');
  });

  it('answers a greedy completion with the generate route text, streamed or not', async () => {
    const prompt = 'The node said';
    const expected = await generateRoute(prompt, { max_tokens: 24, temperature: 0 });
    expect(expected.length).toBeGreaterThan(0);
    const completion = await client.completions.create({ model: 'tiny_decoder', prompt, max_tokens: 24, temperature: 0 });
    expect(completion.choices[0]?.text).toBe(expected);
    const stream = await client.completions.create({ model: 'tiny_decoder', prompt, max_tokens: 24, temperature: 0, stream: true });
    let streamed = '';
    let chunks = 0;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.text ?? '';
      chunks += 1;
    }
    expect(streamed).toBe(expected);
    expect(chunks).toBeGreaterThan(2);
  });

  it('cuts at a stop string, which is not sent', async () => {
    const prompt = 'stop here';
    const full = await generateRoute(prompt, { max_tokens: 40, temperature: 0, ignore_eos: true });
    const stop = full.slice(10, 13);
    const cut = full.slice(0, full.indexOf(stop));
    const completion = await client.completions.create({ model: 'tiny_decoder', prompt, max_tokens: 40, temperature: 0, stop: [stop] });
    expect(completion.choices[0]).toMatchObject({ text: cut, finish_reason: 'stop' });
  });

  it('samples reproducibly with a seed', async () => {
    const ask = (seed: number) => client.completions.create({ model: 'tiny_decoder', prompt: 'seeded', max_tokens: 30, temperature: 1, top_p: 0.95, seed });
    const [a, b] = await Promise.all([ask(5), ask(5)]);
    expect(a.choices[0]?.text).toBe(b.choices[0]?.text);
    const greedy = await generateRoute('seeded', { max_tokens: 30, temperature: 0 });
    // top_k 1 is greedy whatever the temperature.
    expect(await generateRoute('seeded', { max_tokens: 30, temperature: 1, top_k: 1, seed: 9 })).toBe(greedy);
  });

  it('chats, streaming', async () => {
    const stream = await client.chat.completions.create({
      model: 'tiny_decoder',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 16,
      temperature: 0,
      stream: true,
    });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(await generateRoute('<|user|>\nhello\n<|assistant|>\n', { max_tokens: 16, temperature: 0 }));
    expect(finish).toBeDefined();
  });
});
