/**
 * The example `rag_pipeline` through the gateway's LLM routes with a tenant key (redis + node +
 * gateway, rag-fleet.ts): generate_stream relays the pipeline's streamed answer event by event, the
 * official `openai` client streams a chat completion from it, the answer holds the passage the
 * question matches, a stranger's key is refused, and a client that goes away mid-answer stops the
 * decoder on the node (it logs that it saw its signal).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startRagFleet, type RagFleet } from './rag-fleet.js';

const KEY = 'tsk_rag-llm-tenant';
const QUESTION = 'How does dynamic batching merge requests?';
const PASSAGE = '[1] Dynamic batching: The dynamic batcher holds requests';

function events(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)) as Record<string, unknown>);
}

describe('rag_pipeline through the gateway generate and /v1 routes (redis + node + gateway)', () => {
  let fleet: RagFleet;

  beforeAll(async () => {
    fleet = await startRagFleet({
      tiers: { standard: { queueTimeoutMs: 20_000, allowedModels: ['*'] } },
      tenants: [{ id: 'rag', tier: 'standard', allowedModels: ['rag_pipeline'], keys: [{ id: 'rag1', hash: await sha256Hex(KEY) }] }],
    });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  it('generate_stream with the tenant key: the answer arrives as several events and holds the matching passage', async () => {
    const response = await fleet.call(KEY, '/v2/models/rag_pipeline/generate_stream', { text_input: QUESTION, stream: true, top_k: 1 });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const answer = events(await response.text());
    expect(answer.length).toBeGreaterThan(5);
    const text = answer.map((e) => e['text_output']).join('');
    expect(text).toContain(PASSAGE);
    expect(text).not.toContain('[2]');
  });

  it('the official openai client with the tenant key as apiKey streams a chat completion', async () => {
    const client = new OpenAI({ baseURL: `${fleet.gateway.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'rag_pipeline', messages: [{ role: 'user', content: QUESTION }], stream: true });
    const pieces: string[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.delta.content ?? '');
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.filter((p) => p !== '').length).toBeGreaterThan(5);
    expect(pieces.join('')).toContain('Dynamic batching: The dynamic batcher holds requests');
    expect(finish).toBe('stop');
  });

  it('a client that closes its generate_stream mid-answer stops the decoder behind the gateway', async () => {
    const before = (await fleet.cancellations()).length;
    const controller = new AbortController();
    // Every passage in the prompt: hundreds of tokens, seconds of streaming.
    const response = await fleet.call(KEY, '/v2/models/rag_pipeline/generate_stream', { text_input: 'models, requests, tenants and the node', stream: true, top_k: 12 }, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = 0;
    while (seen < 3) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the answer ended before the test could close it');
      seen += new TextDecoder().decode(value).split('\n\n').filter((e) => e.startsWith('data: ')).length;
    }
    controller.abort();
    const deadline = Date.now() + 20_000;
    while ((await fleet.cancellations()).length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await fleet.cancellations()).length).toBeGreaterThan(before);
  });

  it("a stranger's key is refused before anything runs", async () => {
    const response = await fleet.call('tsk_nobody', '/v2/models/rag_pipeline/generate_stream', { text_input: QUESTION });
    expect(response.status).toBe(401);
  });

  it("the pipeline's refusal of a bad top_k comes back through the gateway as a 400", async () => {
    const response = await fleet.call(KEY, '/v2/models/rag_pipeline/generate_stream', { text_input: QUESTION, top_k: 0 });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/top_k must be from 1 to 12/);
  });
});
