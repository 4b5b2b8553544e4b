/**
 * Decoupled composing models at load, against a real node: an ensemble whose decoupled step feeds
 * another step (Triton would fan its responses out; Tessera does not) fails to load with a reason
 * naming that step, while one whose decoupled model is the last step loads, is decoupled, and streams.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { llmRepository, type LlmRepository } from './support.js';

const step = (model: string, input: string, output: string) =>
  `{ model_name: "${model}" model_version: -1 input_map { key: "text_input" value: "${input}" } output_map { key: "text_output" value: "${output}" } }`;

function ensembleConfig(name: string, steps: string[]): string {
  return `name: "${name}"
platform: "ensemble"
max_batch_size: 0
input [ { name: "PROMPT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
ensemble_scheduling { step [ ${steps.join(', ')} ] }
`;
}

let repo: LlmRepository;
let node: TestNode;

beforeAll(async () => {
  repo = await llmRepository();
  const write = async (name: string, text: string) => {
    await mkdir(join(repo.dir, name, '1'), { recursive: true });
    await writeFile(join(repo.dir, name, 'config.pbtxt'), text);
  };
  // token_stream first, its text fed to token_stream again: the first step is decoupled and not last.
  await write('twice', ensembleConfig('twice', [step('token_stream', 'PROMPT', 'mid'), step('token_stream', 'mid', 'TEXT')]));
  await write('once', ensembleConfig('once', [step('token_stream', 'PROMPT', 'TEXT')]));
  node = await startTestNode(repo.dir);
});

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

describe('decoupled composing models at load', () => {
  it('a decoupled step that is not the last one fails the load, naming the step', async () => {
    const index = (await (await fetch(`${node.http}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as { name: string; state: string; reason?: string }[];
    const twice = index.find((entry) => entry.name === 'twice');
    expect(twice?.state).toBe('UNAVAILABLE');
    expect(twice?.reason).toMatch(/step 0 \('token_stream'\) is a decoupled model, which Tessera supports only as the last step of an ensemble, but step 1 \('token_stream'\) read\(s\) its outputs/);
    expect(index.find((entry) => entry.name === 'once')?.state).toBe('READY');
  });

  it('the ensemble ending in it streams through generate_stream', async () => {
    const response = await fetch(`${node.http}/v2/models/once/generate_stream`, { method: 'POST', body: JSON.stringify({ PROMPT: 'a b c d' }) });
    expect(response.status).toBe(200);
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('data: '));
    // token_stream without `stream` answers once, its prompt echoed then generated: one event.
    expect(events.map((e) => (JSON.parse(e.slice(6)) as { TEXT: string }).TEXT)).toEqual(['a b c da b c d']);
  });
});
