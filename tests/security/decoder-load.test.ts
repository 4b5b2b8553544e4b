/**
 * Models the onnxruntime_llm backend must refuse at load, each with an error naming what is wrong: a
 * tokenizer file that is not JSON, not a tokenizer, or missing; an ONNX model whose inputs or outputs
 * do not have the cached-attention layout; a config that is not decoupled or names a token the
 * tokenizer lacks; a model file the last-position patch (last-position-outputs.ts) cannot read fails as
 * onnxruntime's own load would. Real onnxruntime and the real tokenizer package load each one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSimpleOnnx } from '../../gpu-node/src/example-models/simple-models.js';
import { buildTinyDecoderOnnx } from '../../gpu-node/src/example-models/tiny-decoder-onnx.js';
import { TINY_DECODER_SPEC } from '../../gpu-node/src/example-models/tiny-decoder.js';
import { startLlm, tinyDecoderRepo, type TinyDecoderRepo } from '../../gpu-node/test/support/llm-test-support.js';

let repo: TinyDecoderRepo;

beforeAll(async () => {
  repo = await tinyDecoderRepo();
});

afterAll(async () => {
  await repo?.remove();
});

async function loadError(...args: Parameters<TinyDecoderRepo['source']>): Promise<{ code: string; message: string }> {
  const source = await repo.source(...args);
  try {
    const instance = await startLlm(source);
    await instance.close();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('the model loaded');
}

describe('onnxruntime_llm refuses broken models at load', () => {
  it('a tokenizer.json that is not JSON', async () => {
    const error = await loadError({}, { '1/tokenizer.json': '{"model": {"type": "BPE", "vocab": ' });
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/tokenizer file '.*tokenizer\.json' is not valid JSON/);
  });

  it('a tokenizer.json that is JSON but no tokenizer', async () => {
    expect((await loadError({}, { '1/tokenizer.json': '{"hello": 1}' })).message).toMatch(/tokenizer\.json' has no 'model' with a 'type' and a 'vocab'/);
    expect((await loadError({}, { '1/tokenizer.json': '[1, 2]' })).message).toMatch(/tokenizer\.json' must hold a JSON object/);
  });

  it('a tokenizer.json whose model the package cannot build', async () => {
    const broken = JSON.stringify({ model: { type: 'NoSuchModel', vocab: {} } });
    expect((await loadError({}, { '1/tokenizer.json': broken })).message).toMatch(/tokenizer\.json' could not be loaded/);
  });

  it('a tokenizer file that is not there, or a tokenizer_file parameter that is a path', async () => {
    expect((await loadError({ parameters: { tokenizer_file: 'missing.json' } })).message).toMatch(/tokenizer file 'missing\.json' not found/);
    expect((await loadError({ parameters: { tokenizer_file: '../../etc/passwd' } })).message).toMatch(/'tokenizer_file' must be a file name/);
  });

  it('an end-of-sequence token the tokenizer does not have', async () => {
    expect((await loadError({ parameters: { eos_token: '<|nope|>' } })).message).toMatch(/end-of-sequence token '<\|nope\|>' is not in tokenizer file/);
  });

  it('an ONNX model without the decoder inputs', async () => {
    const error = await loadError({}, { '1/model.onnx': buildSimpleOnnx() });
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/does not have the decoder layout .*input 'input_ids' is missing/);
  });

  it('a decoder whose vocabulary is smaller than its tokenizer', async () => {
    const small = buildTinyDecoderOnnx({ ...TINY_DECODER_SPEC, vocab: 100 }, 1);
    expect((await loadError({}, { '1/model.onnx': small })).message).toMatch(/tokenizer has 260 tokens, more than the model's 100 logits/);
  });

  it('a file that is not ONNX at all', async () => {
    expect((await loadError({}, { '1/model.onnx': 'not a model' })).message).toMatch(/onnxruntime could not load/);
  });

  it('a malformed model file (truncated, or a graph longer than the file) fails naming the file, patched or not', async () => {
    const model = buildTinyDecoderOnnx(TINY_DECODER_SPEC, 1);
    const truncated = model.subarray(0, model.byteLength >> 1);
    const overlong = new Uint8Array([0x08, 0x08, 0x3a, 0xff, 0xff, 0xff, 0xff, 0x07, 0x0a]);
    for (const bytes of [truncated, overlong]) {
      const error = await loadError({}, { '1/model.onnx': bytes });
      expect(error.code).toBe('INVALID_ARG');
      expect(error.message).toMatch(/onnxruntime could not load '.*\/1\/model\.onnx'/);
    }
  });

  it('bad parameters', async () => {
    expect((await loadError({ parameters: { max_num_seqs: '0' } })).message).toMatch(/'max_num_seqs' must be an integer >= 1/);
    expect((await loadError({ parameters: { kv_cache_bytes: 'lots' } })).message).toMatch(/'kv_cache_bytes' must be an integer/);
    expect((await loadError({ parameters: { admission: 'maybe' } })).message).toMatch(/'admission' must be 'wait' or 'reject'/);
    expect((await loadError({ parameters: { length_buckets: '64,32' } })).message).toMatch(/'length_buckets' must be ascending/);
    expect((await loadError({ parameters: { length_buckets: '64,,128' } })).message).toMatch(/'length_buckets' must be 'none' or ascending integers/);
    expect((await loadError({ parameters: { max_num_batched_tokens: '0' } })).message).toMatch(/'max_num_batched_tokens' must be an integer >= 1/);
    expect((await loadError({ parameters: { max_num_batched_tokens: '1e9x' } })).message).toMatch(/'max_num_batched_tokens' must be an integer >= 1/);
    expect((await loadError({ parameters: { length_buckets: Array.from({ length: 17 }, (_, i) => 2 + i).join(',') } })).message).toMatch(/at most 16 bounds/);
    expect((await loadError({ parameters: { prefill_order: 'random' } })).message).toMatch(/'prefill_order' must be 'arrival' or 'shortest_first'/);
    expect((await loadError({ parameters: { prefill_aging_ms: '-1' } })).message).toMatch(/'prefill_aging_ms' must be an integer >= 0/);
    expect((await loadError({ parameters: { decode_run_rows: '-1' } })).message).toMatch(/'decode_run_rows' must be an integer >= 0.*'-1'/);
    expect((await loadError({ parameters: { decode_run_rows: 'half' } })).message).toMatch(/'decode_run_rows' must be an integer >= 0.*'half'/);
    expect((await loadError({ parameters: { decode_run_rows: '1'.repeat(30) } })).message).toMatch(/'decode_run_rows' must be an integer >= 0/);
    expect((await loadError({ parameters: { busy_prefill_group_tokens: '0' } })).message).toMatch(/'busy_prefill_group_tokens' must be an integer >= 1/);
    expect((await loadError({ parameters: { busy_prefill_group_tokens: 'few' } })).message).toMatch(/'busy_prefill_group_tokens' must be an integer >= 1/);
    expect((await loadError({ parameters: { first_token_handoff_us: '-5' } })).message).toMatch(/'first_token_handoff_us' must be an integer >= 0/);
    expect((await loadError({ parameters: { first_token_handoff_us: 'soon' } })).message).toMatch(/'first_token_handoff_us' must be an integer >= 0/);
    // An engine stalled for seconds behind a stuck main thread: refused.
    expect((await loadError({ parameters: { first_token_handoff_us: '5000000' } })).message).toMatch(/'first_token_handoff_us' must be at most 1000000, got '5000000'/);
  });
});
