/**
 * Generates the whole example repository once and runs every ONNX model in onnxruntime-node, checking
 * real outputs; configs are parsed with the project's ModelConfig schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { fromText } from '@bufbuild/protobuf/txtpb';
import { ModelConfigSchema, ModelInstanceGroup_Kind } from '../../../shared/src/gen/model_config_pb.js';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { EXAMPLE_MODEL_NAMES, writeExampleRepository } from './example-repository.js';
import { buildMlpOnnx, MLP_SMALL } from './mlp-models.js';
import { mulberry32 } from './prng.js';
import { buildStringIdentityOnnx } from './simple-models.js';

let repo: string;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-example-models-'));
  await writeExampleRepository(repo);
});

afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

const session = (name: string) => ort.InferenceSession.create(join(repo, name, '1', 'model.onnx'));
const readConfig = async (name: string) => fromText(ModelConfigSchema, await readFile(join(repo, name, 'config.pbtxt'), 'utf8'));

function randomInput(rows: number, cols: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: rows * cols }, () => next() * 2 - 1);
}

/** Runs `rows` through the model once as a batch and once row by row; the rows must agree. */
async function expectBatchMatchesSingles(s: ort.InferenceSession, inWidth: number, outWidth: number): Promise<void> {
  const x = randomInput(3, inWidth, 7);
  const batch = (await s.run({ INPUT0: new ort.Tensor('float32', x, [3, inWidth]) })).OUTPUT0;
  expect(batch?.dims).toEqual([3, outWidth]);
  const batchData = batch?.data as Float32Array;
  expect(batchData.every(Number.isFinite)).toBe(true);
  // Outputs should not all be ~0: that would mean dead ReLUs or vanishing weights.
  expect(batchData.some((v) => Math.abs(v) > 1e-3)).toBe(true);
  for (let row = 0; row < 3; row++) {
    const single = x.subarray(row * inWidth, (row + 1) * inWidth);
    const out = (await s.run({ INPUT0: new ort.Tensor('float32', single, [1, inWidth]) })).OUTPUT0;
    expect(out?.dims).toEqual([1, outWidth]);
    const got = out?.data as Float32Array;
    const want = batchData.subarray(row * outWidth, (row + 1) * outWidth);
    for (let i = 0; i < outWidth; i++) expect(Math.abs((got[i] as number) - (want[i] as number))).toBeLessThan(1e-5);
  }
}

describe('writeExampleRepository', () => {
  it('writes every model in Triton layout with configs the ModelConfig schema reads', async () => {
    expect(EXAMPLE_MODEL_NAMES).toEqual(['simple', 'simple_identity', 'mlp_small', 'mlp_large', 'ts_scale', 'silero_vad', 'mlp_preprocess', 'mlp_postprocess', 'mlp_pipeline', 'token_stream', 'tiny_decoder', 'simple_string', 'simple_int8', 'simple_sequence', 'simple_dyna_sequence', 'simple_string_dyna_sequence', 'repeat_int32']);
    const simple = await readConfig('simple');
    expect(simple.name).toBe('simple');
    expect(simple.platform).toBe('onnxruntime_onnx');
    expect(simple.maxBatchSize).toBe(8);
    expect(simple.input.map((t) => [t.name, t.dims.map(Number)])).toEqual([
      ['INPUT0', [16]],
      ['INPUT1', [16]],
    ]);
    expect(simple.output.map((t) => t.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect((await readConfig('simple_identity')).maxBatchSize).toBe(8);
    const small = await readConfig('mlp_small');
    const large = await readConfig('mlp_large');
    expect([small.maxBatchSize, large.maxBatchSize]).toEqual([32, 64]);
    for (const cfg of [small, large]) {
      expect(cfg.instanceGroup.map((g) => [g.count, g.kind])).toEqual([[1, ModelInstanceGroup_Kind.CPU]]);
      expect(Object.keys(cfg.parameters)).toEqual([]);
    }
    const ts = await readConfig('ts_scale');
    expect(ts.backend).toBe('typescript');
    expect(ts.defaultModelFilename).toBe('model.js');
    expect(ts.parameters.factor?.stringValue).toBe('2');
    expect((await stat(join(repo, 'ts_scale', '1', 'model.js'))).isFile()).toBe(true);
  });

  it('simple: OUTPUT0 is the sum and OUTPUT1 the difference, row by row', async () => {
    const s = await session('simple');
    const a = Int32Array.from({ length: 32 }, (_, i) => i * 3 - 40);
    const b = Int32Array.from({ length: 32 }, (_, i) => (i % 5) - 2 + (i >= 16 ? 1000 : 0));
    const out = await s.run({ INPUT0: new ort.Tensor('int32', a, [2, 16]), INPUT1: new ort.Tensor('int32', b, [2, 16]) });
    expect(out.OUTPUT0?.dims).toEqual([2, 16]);
    expect(Array.from(out.OUTPUT0?.data as Int32Array)).toEqual(Array.from(a, (v, i) => v + (b[i] as number)));
    expect(Array.from(out.OUTPUT1?.data as Int32Array)).toEqual(Array.from(a, (v, i) => v - (b[i] as number)));
  });

  it('the ONNX string identity fixture: strings round trip, UTF-8 and empty ones included', async () => {
    const s = await ort.InferenceSession.create(buildStringIdentityOnnx());
    const strings = ['hello', '', 'héllo wörld ✓', 'x'.repeat(1000)];
    const out = await s.run({ INPUT0: new ort.Tensor('string', strings, [4, 1]) });
    expect(out.OUTPUT0?.dims).toEqual([4, 1]);
    expect(out.OUTPUT0?.data).toEqual(strings);
  });

  it('mlp_small: finite outputs of shape [batch, 10], a batch of 3 equal to 3 singles', async () => {
    const s = await session('mlp_small');
    expect(s.inputNames).toEqual(['INPUT0']);
    expect(s.outputNames).toEqual(['OUTPUT0']);
    await expectBatchMatchesSingles(s, 256, 10);
  });

  it('mlp_small: the same seed gives the same bytes, another seed other weights', async () => {
    const onDisk = new Uint8Array(await readFile(join(repo, 'mlp_small', '1', 'model.onnx')));
    expect(Buffer.from(buildMlpOnnx(MLP_SMALL)).equals(onDisk)).toBe(true);
    const reseeded = buildMlpOnnx(MLP_SMALL, 43);
    expect(reseeded.length).toBe(onDisk.length);
    expect(Buffer.from(reseeded).equals(onDisk)).toBe(false);
  });

  it('mlp_large: loads, and a batch of 3 equals 3 singles', async () => {
    const file = join(repo, 'mlp_large', '1', 'model.onnx');
    // 1024·4096 + 4096·4096 + 4096·1024 weights and 9216 biases, float32.
    expect((await stat(file)).size).toBeGreaterThan((1024 * 4096 * 2 + 4096 * 4096 + 9216) * 4);
    const s = await session('mlp_large');
    await expectBatchMatchesSingles(s, 1024, 1024);
  });

  it('rewrites a model folder from scratch and leaves other folders alone', async () => {
    await writeFile(join(repo, 'simple', 'stale.txt'), 'old');
    await writeFile(join(repo, 'not_ours.txt'), 'keep');
    const written = await writeExampleRepository(repo, { only: ['simple'] });
    expect(written.map((m) => [m.name, m.files])).toEqual([['simple', ['config.pbtxt', '1/model.onnx']]]);
    await expect(stat(join(repo, 'simple', 'stale.txt'))).rejects.toThrow();
    expect(await readFile(join(repo, 'not_ours.txt'), 'utf8')).toBe('keep');
    expect((await stat(join(repo, 'mlp_large', '1', 'model.onnx'))).isFile()).toBe(true);
  });

  it('rejects unknown model names before writing anything', async () => {
    const err = await writeExampleRepository(join(repo, 'never'), { only: ['simple', 'nope'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).code).toBe('INVALID_ARG');
    await expect(stat(join(repo, 'never'))).rejects.toThrow();
  });
});
