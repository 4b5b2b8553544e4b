/**
 * What decode runs fetch from onnxruntime: the tiny decoder loads with last-position outputs and its
 * decode runs fetch one position per present; a model the patch cannot take (a name clash) loads as it
 * is, says why, fetches the full presents, and generates the same tokens. Real onnxruntime throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../../test/support/llm-test-support.js';
import { clashingTinyDecoder } from '../../../test/support/patched-decoder-models.js';
import type { LlmInstance } from './llm-backend.js';

let repo: TinyDecoderRepo;
let patched: LlmInstance;
let unpatched: LlmInstance;

beforeAll(async () => {
  repo = await tinyDecoderRepo();
  patched = await startLlm(await repo.source({ maxNumSeqs: 8 }));
  unpatched = await startLlm(await repo.source({ maxNumSeqs: 8 }, { '1/model.onnx': clashingTinyDecoder() }));
}, 60_000);

afterAll(async () => {
  await patched?.close();
  await unpatched?.close();
  await repo?.remove();
});

const PROMPTS = ['the cache', 'Tessera streams tokens', 'x', 'decode é 🙂 batch', 'gpu node', 'a longer prompt than the others by some way', 'q', 'token'];

async function texts(instance: LlmInstance): Promise<string[]> {
  const runs = PROMPTS.map((prompt, i) => generate(instance, prompt, { max_tokens: 10 + 5 * i, temperature: 0 }));
  return (await Promise.all(runs)).map((g) => g.text);
}

describe('decode runs fetch the last position of each present', () => {
  it('the tiny decoder loads with last-position outputs; a model whose names clash loads unpatched, says why, and generates the same tokens', async () => {
    expect(patched.info.kvFetch).toBe('last-position');
    expect(unpatched.info.kvFetch).toBe('full');
    expect(unpatched.info.kvFetchWhy).toMatch(/already has a value named 'present\.0\.key\/tessera_last_position'/);
    const [a, b] = await Promise.all([texts(patched), texts(unpatched)]);
    expect(a.every((t) => t.length > 0)).toBe(true);
    expect(a).toEqual(b);
  });

  it('a patched decode run fetches logits and one position per present; an unpatched one the whole cache', async () => {
    const fetchedPerRowStep = async (instance: LlmInstance) => {
      const before = await instance.engineStats();
      await generate(instance, 'the cache', { max_tokens: 40, temperature: 0, ignore_eos: true });
      const after = await instance.engineStats();
      return { bytes: after.stepFetchedBytes - before.stepFetchedBytes, rows: after.stepSequences - before.stepSequences };
    };
    const { layers, heads, headDim, vocab } = patched.info;
    const onePosition = 2 * layers * heads * headDim * 4;
    const p = await fetchedPerRowStep(patched);
    expect(p.rows).toBeGreaterThan(0);
    expect(p.bytes).toBe(p.rows * (vocab * 4 + onePosition));
    const u = await fetchedPerRowStep(unpatched);
    expect(u.rows).toBe(p.rows);
    // At least the 9 prompt tokens cached plus the new one, per present.
    expect(u.bytes).toBeGreaterThanOrEqual(u.rows * (vocab * 4 + 10 * onePosition));
  });
});
