/**
 * Triton's generate extension end to end, against a node serving the example decoupled `token_stream`:
 * the one-answer form, the exact SSE framing of generate_stream, errors as events, and a client that
 * closes the connection mid-stream stopping the model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { eventually, llmRepository, longPrompt, writeDecoupledScriptModel, type LlmRepository } from './support.js';

let node: TestNode;
let repo: LlmRepository;

/** A decoupled model that sends one response, then fails the request. */
async function writeFailsMidway(dir: string): Promise<void> {
  await writeDecoupledScriptModel(dir, 'fails_midway', {
    io: [
      'input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]',
      'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]',
    ],
    model: [
      'export async function execute(requests) {',
      '  for (const { sender } of requests) {',
      "    sender.send({ outputs: { text_output: { datatype: 'BYTES', shape: [1], data: ['partial'] } } });",
      "    await new Promise((resolve) => setTimeout(resolve, 20));",
      "    sender.send({ error: 'boom after one response' });",
      '  }',
      '}',
    ],
  });
}

beforeAll(async () => {
  repo = await llmRepository();
  await writeFailsMidway(repo.dir);
  node = await startTestNode(repo.dir);
});

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

const post = (path: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${node.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...init });

describe('generate', () => {
  it('answers one JSON object: the text output as a scalar string, the model name and version', async () => {
    const res = await post('/v2/models/token_stream/generate', { text_input: 'hello there world', exclude_input_in_output: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ model_name: 'token_stream', model_version: '1', text_output: 'hello there world' });
    const withPrompt = await post('/v2/models/token_stream/versions/1/generate', {
      text_input: 'a b c',
      sampling_parameters: JSON.stringify({ max_tokens: 2 }),
    });
    expect(await withPrompt.json()).toMatchObject({ text_output: 'a b ca b' });
  });

  it('merges a streaming decoupled answer: the final response wins', async () => {
    const res = await post('/v2/models/token_stream/generate', { text_input: 'one two three', stream: true });
    expect(await res.json()).toEqual({ model_name: 'token_stream', model_version: '1', text_output: ' three' });
  });

  it('an error before streaming is an ordinary HTTP error', async () => {
    const res = await post('/v2/models/token_stream/generate', { stream: true });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/text_input/);
  });
});

describe('generate_stream', () => {
  it('frames each response as one `data: {json}` event', async () => {
    const res = await post('/v2/models/token_stream/generate_stream', { text_input: 'one two three', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const event = (text: string) => `data: ${JSON.stringify({ model_name: 'token_stream', model_version: '1', text_output: text })}\n\n`;
    expect(await res.text()).toBe(event('one') + event(' two') + event(' three'));
  });

  it('a failure before the first response is an ordinary HTTP error', async () => {
    const res = await post('/v2/models/token_stream/generate_stream', { text_input: 'x', stream: true, sampling_parameters: '[1]' });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'sampling_parameters must be a JSON object' });
  });

  it("the model's error once streaming has begun is the event data: {\"error\": ...}", async () => {
    const res = await post('/v2/models/fails_midway/generate_stream', { text_input: 'x' });
    expect(res.status).toBe(200);
    const first = JSON.stringify({ model_name: 'fails_midway', model_version: '1', text_output: 'partial' });
    expect(await res.text()).toBe(`data: ${first}\n\ndata: {"error":"boom after one response"}\n\n`);
  });

  it('closing the connection mid-stream cancels the request: the model sees its signal', async () => {
    const before = (await repo.cancellations()).length;
    const controller = new AbortController();
    const res = await post('/v2/models/token_stream/generate_stream', { text_input: longPrompt(5000), stream: true }, { signal: controller.signal });
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/data: /g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
    const sent = Number(/^cancelled (\d+)$/.exec((await repo.cancellations())[before] ?? '')?.[1]);
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(sent).toBeLessThan(5000);
  });
});
