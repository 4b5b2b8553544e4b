/**
 * How many tokens a streamed request's first SSE event waits for (issue 21, tail21): a byte-level model may sample a
 * first token that ends inside a UTF-8 character, and its text then goes out only with a later token, so the
 * client's first event comes a decode step (or more) after the engine's first token. For the bench's probe prompts
 * (llm-stream-client.ts, seed 8) against tiny_decoder, one at a time: the smallest n whose first n tokens decode to
 * text not ending in a partial character (what TextStream.push checks), found by streaming each with max_tokens
 * 1..8 (the stream's whole text at n tokens is their decoding, a partial character flushed as U+FFFD).
 *
 *   node --import tsx loadtests/src/scenarios/llm-first-event-tokens.ts [PROBES]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { tinyDecoderFiles } from '../../../gpu-node/src/example-models/tiny-decoder.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { promptFor } from './llm-stream-client.js';

const PROBES = Number(process.argv[2] ?? 200);
const MODEL = 'tiny_decoder';

/** The texts of a streamed request's events, in order. */
async function eventTexts(httpBase: string, prompt: string, maxTokens: number): Promise<string[]> {
  const res = await fetch(`${httpBase}/v2/models/${MODEL}/generate_stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text_input: prompt, stream: true, sampling_parameters: JSON.stringify({ max_tokens: maxTokens, ignore_eos: true, temperature: 0 }) }),
  });
  const body = await res.text();
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data:'))
    .map((e) => (JSON.parse(e.slice(5)) as { text_output?: string }).text_output ?? '');
}

async function main(): Promise<void> {
  const repo = await mkdtemp(join(tmpdir(), 'tessera-first-event-'));
  for (const file of tinyDecoderFiles({ name: MODEL, maxNumSeqs: 32, kvCacheBytes: 128 * 1024 * 1024 })) {
    const path = join(repo, MODEL, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.contents);
  }
  const node = await launchNode({ modelRepository: repo });
  try {
    await waitForModelReady(node.httpBase, MODEL);
    const random = mulberry32(8);
    const firstEventTokens: number[] = [];
    const distinct = new Map<string, number>();
    for (let i = 0; i < PROBES; i++) {
      const prompt = promptFor(random);
      let carried = 9;
      for (let n = 1; n <= 8; n++) {
        if (!(await eventTexts(node.httpBase, prompt, n)).join('').endsWith('\uFFFD')) {
          carried = n;
          break;
        }
      }
      firstEventTokens.push(carried);
      distinct.set(prompt, carried);
    }
    const histogram: Record<number, number> = {};
    for (const n of firstEventTokens) histogram[n] = (histogram[n] ?? 0) + 1;
    const prompts: Record<number, number> = {};
    for (const n of distinct.values()) prompts[n] = (prompts[n] ?? 0) + 1;
    process.stdout.write(`${JSON.stringify({ probes: PROBES, firstEventTokensHistogram: histogram, distinctPrompts: distinct.size, distinctPromptsHistogram: prompts }, null, 1)}\n`);
  } finally {
    await node.stop();
    await rm(repo, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
