/**
 * The `openai` backend end to end: a node whose model `remote` forwards to an OpenAI-compatible engine
 * (engine-double.ts), reached through the node's own OpenAI API (the official client), the generate
 * extension, and gRPC-free paths alike; the engine sees the upstream model name, the sampling
 * parameters and the key from the environment; its failures come back as errors; a client that goes
 * away closes the upstream connection; a config with an unusable base_url fails its load.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleRepository, removeDir, startTestNode, type TestNode } from '../support.js';
import { startEngineDouble, type EngineDouble } from './engine-double.js';
import { eventually, longPrompt } from './support.js';

const KEY_ENV = 'TESSERA_TEST_ENGINE_KEY';
let engine: EngineDouble;
let node: TestNode;
let repo: string;
let client: OpenAI;

async function writeRemote(name: string, baseUrl: string, extra: Record<string, string> = {}): Promise<void> {
  const dir = join(repo, name);
  await mkdir(join(dir, '1'), { recursive: true });
  const parameters = { base_url: baseUrl, upstream_model: 'engine-model', ...extra };
  await writeFile(
    join(dir, 'config.pbtxt'),
    [
      `name: "${name}"`,
      'backend: "openai"',
      'max_batch_size: 0',
      'model_transaction_policy { decoupled: true }',
      'input [',
      '  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },',
      '  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true },',
      '  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
      '  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true }',
      ']',
      'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]',
      'instance_group [ { count: 1 kind: KIND_CPU } ]',
      ...Object.entries(parameters).map(([k, v]) => `parameters { key: "${k}" value: { string_value: ${JSON.stringify(v)} } }`),
      '',
    ].join('\n'),
  );
}

beforeAll(async () => {
  engine = await startEngineDouble();
  process.env[KEY_ENV] = 'engine-secret';
  repo = await exampleRepository([]);
  await writeRemote('remote', engine.baseUrl, { api_key_env: KEY_ENV });
  await writeRemote('bad_remote', 'file:///etc/passwd');
  // Port 9 on 127.0.0.1 (discard): nothing listens there on a test box, so the connection is refused.
  await writeRemote('dead_remote', 'http://127.0.0.1:9/v1');
  node = await startTestNode(repo);
  client = new OpenAI({ baseURL: `${node.http}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  await node?.stop();
  await engine?.close();
  await removeDir(repo);
  delete process.env[KEY_ENV];
});

describe('the openai backend', () => {
  it("streams the engine's pieces through the node's OpenAI API, with the upstream name, sampling and key", async () => {
    const stream = await client.completions.create({ model: 'remote', prompt: 'one two three', max_tokens: 2, temperature: 0.3, stream: true });
    const pieces = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.text);
    expect(pieces).toEqual(['one', ' two', '']);
    const seen = engine.requests.at(-1);
    expect(seen?.authorization).toBe('Bearer engine-secret');
    expect(seen?.body).toMatchObject({ model: 'engine-model', prompt: 'one two three', stream: true, max_tokens: 2, temperature: 0.3 });
  });

  it('answers a non-streamed generate with one upstream completion', async () => {
    const res = await fetch(`${node.http}/v2/models/remote/generate`, {
      method: 'POST',
      body: JSON.stringify({ text_input: 'abc', exclude_input_in_output: true }),
    });
    expect(await res.json()).toEqual({ model_name: 'remote', model_version: '1', text_output: 'ABC' });
    expect(engine.requests.at(-1)?.body['stream']).toBe(false);
  });

  it("reports the engine's failure with its message", async () => {
    const error = await client.completions.create({ model: 'remote', prompt: 'fail' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as Error).message).toMatch(/engine answered 503: engine overloaded/);
    expect((error as Error).message).not.toMatch(/engine-secret/);
  });

  it('an engine that cannot be reached is a 503 saying so', async () => {
    const error = await client.completions.create({ model: 'dead_remote', prompt: 'x' }).catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as Error).message).toMatch(/the engine could not be reached/);
  });

  it('closes the upstream connection when the client goes away mid-stream', async () => {
    const before = engine.closedEarly;
    const controller = new AbortController();
    const res = await fetch(`${node.http}/v2/models/remote/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ text_input: longPrompt(3000), stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(await eventually(() => Promise.resolve(engine.closedEarly > before))).toBe(true);
  });

  it('refuses a base_url that is not http(s): the model does not load, and says why', async () => {
    const index = (await (await fetch(`${node.http}/v2/repository/index`, { method: 'POST' })).json()) as { name: string; state: string; reason: string }[];
    const bad = index.find((e) => e.name === 'bad_remote');
    expect(bad?.state).toBe('UNAVAILABLE');
    expect(bad?.reason).toMatch(/base_url must be http or https/);
  });
});
