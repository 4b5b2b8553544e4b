/**
 * Hostile and malformed requests to the generate extension and to decoupled models over HTTP, against a
 * real `tessera-node` process serving the example decoupled `token_stream`: each is refused with
 * Triton's `{"error": "..."}` and a 4xx before any inference runs, and the node keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { llmRepository, type LlmRepository } from '../../gpu-node/test/llm/support.js';
import { removeDir } from '../../gpu-node/test/support.js';
import { startNodeProcess, type NodeProcess } from './support/node-process.js';

let node: NodeProcess;
let repo: LlmRepository;

beforeAll(async () => {
  repo = await llmRepository();
  node = await startNodeProcess(repo.dir);
});

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

async function requestsSeen(): Promise<number> {
  const res = await fetch(`${node.http}/v2/models/token_stream/stats`);
  const stats = (await res.json()) as { model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[] };
  const s = stats.model_stats[0]?.inference_stats;
  return (s?.success.count ?? 0) + (s?.fail.count ?? 0);
}

/** `{"text_input": [[[...["x"]...]]]}`, written as text (JSON.stringify itself would overflow the stack). */
function nested(depth: number): string {
  return `{"text_input": ${'['.repeat(depth)}"x"${']'.repeat(depth)}}`;
}

const cases: [string, string, string | Uint8Array, number, Record<string, string>?][] = [
  ['malformed JSON', 'generate', '{"text_input": ', 400],
  ['a JSON array body', 'generate_stream', '["x"]', 400],
  ['arrays nested 100 000 deep', 'generate', nested(100_000), 400],
  ['arrays nested 40 deep', 'generate', nested(40), 400],
  ['a ragged array', 'generate', JSON.stringify({ text_input: [['a', 'b'], ['c']] }), 400],
  ['a number where BYTES are expected', 'generate_stream', JSON.stringify({ text_input: 5 }), 400],
  ['a string where BOOL is expected', 'generate', JSON.stringify({ text_input: 'x', stream: 'yes' }), 400],
  ['an object parameter', 'generate', JSON.stringify({ text_input: 'x', temperature: { a: 1 } }), 400],
  ['a reserved triton_ parameter', 'generate', JSON.stringify({ text_input: 'x', parameters: { triton_enable_empty_final_response: true } }), 400],
  ['parameters that is a list', 'generate', JSON.stringify({ text_input: 'x', parameters: [1] }), 400],
  ['a gzip body', 'generate', gzipSync(JSON.stringify({ text_input: 'x' })), 400, { 'content-encoding': 'gzip' }],
  ['a missing required input', 'generate_stream', JSON.stringify({ stream: true }), 400],
];

describe('generate refuses bad bodies before any inference runs', () => {
  it.each(cases)('%s', async (_what, route, body, status, headers = {}) => {
    const before = await requestsSeen();
    const res = await fetch(`${node.http}/v2/models/token_stream/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    expect(res.status).toBe(status);
    const answer = (await res.json()) as { error: unknown };
    expect(typeof answer.error).toBe('string');
    expect(await requestsSeen()).toBe(before);
  });

  it('an unknown model is 400 and an unknown version 404, as Triton answers;, decoupled /infer is 501', async () => {
    expect((await fetch(`${node.http}/v2/models/nope/generate`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect((await fetch(`${node.http}/v2/models/token_stream/versions/9/generate_stream`, { method: 'POST', body: '{}' })).status).toBe(404);
    const infer = await fetch(`${node.http}/v2/models/token_stream/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['x'] }] }),
    });
    expect(infer.status).toBe(501);
  });

  it('a prototype-polluting body is plain data, and the node still answers', async () => {
    const res = await fetch(`${node.http}/v2/models/token_stream/generate`, {
      method: 'POST',
      body: '{"text_input":"a b","exclude_input_in_output":true,"__proto__":{"polluted":true},"parameters":{"__proto__":"x"}}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ text_output: 'a b' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
