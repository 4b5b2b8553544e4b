/**
 * Hostile and mistaken requests to an onnxruntime_llm model (tiny_decoder) through a real `tessera-node`
 * process: a prompt longer than the context, max_tokens beyond the context or the KV budget, a prompt of
 * megabytes, malformed sampling parameters. Each gets a 400 naming the problem, nothing hangs, and the
 * model keeps answering (its engine holds no cache afterwards: the next long request still fits).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyDecoderFiles } from '../../gpu-node/src/example-models/tiny-decoder.js';
import { exampleRepository, removeDir } from '../../gpu-node/test/support.js';
import { startNodeProcess, type NodeProcess } from './support/node-process.js';

let node: NodeProcess;
let dir: string;

beforeAll(async () => {
  dir = await exampleRepository(['tiny_decoder']);
  // Room for 100 tokens of KV cache only.
  for (const file of tinyDecoderFiles({ name: 'tiny_decoder_small_cache', kvCacheBytes: 100 * 1024 })) {
    const path = join(dir, 'tiny_decoder_small_cache', file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.contents);
  }
  node = await startNodeProcess(dir);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(dir);
});

async function generate(body: unknown, model = 'tiny_decoder'): Promise<{ status: number; json: { error?: string; text_output?: string } }> {
  const res = await fetch(`${node.http}/v2/models/${model}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { error?: string; text_output?: string } };
}

describe('onnxruntime_llm refuses bad requests with 400 naming the problem', () => {
  const cases: [string, unknown, RegExp, string?][] = [
    ['a prompt longer than the context', { text_input: 'x'.repeat(600) }, /the prompt is 600 tokens; the model's context is 512 tokens/],
    ['max_tokens beyond the context', { text_input: 'hi', sampling_parameters: JSON.stringify({ max_tokens: 100_000 }) }, /plus max_tokens \(100000\) is more than the model's context of 512/],
    ['max_tokens beyond the KV budget', { text_input: 'hi', sampling_parameters: JSON.stringify({ max_tokens: 200 }) }, /needs 206848 bytes of KV cache, more than the model's whole kv_cache_bytes \(102400\)/, 'tiny_decoder_small_cache'],
    ['no max_tokens where the context would not fit the KV budget', { text_input: 'hi' }, /kv_cache_bytes/, 'tiny_decoder_small_cache'],
    ['a prompt of 4 MB', { text_input: 'y'.repeat(4 * 1024 * 1024) }, /the prompt is 4194304 bytes, far more than the model's context/],
    ['an empty prompt', { text_input: '' }, /the prompt is empty/],
    ['sampling_parameters that are not JSON', { text_input: 'hi', sampling_parameters: '{' }, /sampling_parameters: must be a JSON object/],
    ['a negative temperature', { text_input: 'hi', sampling_parameters: JSON.stringify({ temperature: -1 }) }, /'temperature' must be a number in \[0, 100\]/],
    ['top_p above 1', { text_input: 'hi', sampling_parameters: JSON.stringify({ top_p: 2 }) }, /'top_p' must be a number/],
    ['a fractional max_tokens', { text_input: 'hi', sampling_parameters: JSON.stringify({ max_tokens: 1.5 }) }, /'max_tokens' must be an integer/],
    ['stop strings that are not strings', { text_input: 'hi', sampling_parameters: JSON.stringify({ stop: [1] }) }, /'stop' must be a string or a list/],
    ['1000 stop strings', { text_input: 'hi', sampling_parameters: JSON.stringify({ stop: Array(1000).fill('a') }) }, /'stop' must be a string or a list of at most 16/],
    ['a seed that is not an integer', { text_input: 'hi', sampling_parameters: JSON.stringify({ seed: 'x' }) }, /'seed' must be an integer/],
  ];
  for (const [name, body, message, model] of cases) {
    it(name, async () => {
      const { status, json } = await generate(body, model);
      expect(status).toBe(400);
      expect(json.error).toMatch(message);
    });
  }

  it('keeps serving, with its whole budget free again', async () => {
    const { status, json } = await generate({ text_input: 'hi', sampling_parameters: JSON.stringify({ max_tokens: 90, ignore_eos: true }) }, 'tiny_decoder_small_cache');
    expect(status).toBe(200);
    expect(json.text_output?.startsWith('hi')).toBe(true);
    expect(Buffer.byteLength(json.text_output ?? '')).toBeGreaterThan(2);
  });
});
