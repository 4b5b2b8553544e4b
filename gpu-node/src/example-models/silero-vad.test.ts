/**
 * The silero_vad rewrite: the served graph (batch-first state, sr folded to 16 kHz) must compute what
 * the npm graph computes, row for row, and its config must read as a sequence-batched model.
 */
import { readFile } from 'node:fs/promises';
import { fromText } from '@bufbuild/protobuf/txtpb';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { ModelConfigSchema } from '../../../shared/src/gen/model_config_pb.js';
import { mulberry32 } from './prng.js';
import { rewriteSileroVadOnnx, SILERO_CHUNK_SAMPLES, sileroVadConfigText, sileroVadNpmPath } from './silero-vad.js';

describe('silero_vad', () => {
  it('serves the npm model with a batch-first state and sr = 16000', async () => {
    const original = new Uint8Array(await readFile(sileroVadNpmPath()));
    const npm = await ort.InferenceSession.create(original);
    const served = await ort.InferenceSession.create(rewriteSileroVadOnnx(original));
    try {
      expect(served.inputNames).toEqual(['input', 'input_state']);
      expect(served.outputNames).toEqual(['output', 'output_state']);
      const rows = 3;
      const next = mulberry32(5);
      const x = Float32Array.from({ length: rows * SILERO_CHUNK_SAMPLES }, () => next() - 0.5);
      const batchFirst = Float32Array.from({ length: rows * 256 }, () => (next() - 0.5) * 0.2);
      // The npm graph's [2, rows, 128] layout of the same states.
      const middle = new Float32Array(rows * 256);
      for (let r = 0; r < rows; r++) for (let l = 0; l < 2; l++) for (let k = 0; k < 128; k++) {
        middle[(l * rows + r) * 128 + k] = batchFirst[(r * 2 + l) * 128 + k] as number;
      }
      const input = new ort.Tensor('float32', x, [rows, SILERO_CHUNK_SAMPLES]);
      const want = await npm.run({
        input,
        state: new ort.Tensor('float32', middle, [2, rows, 128]),
        sr: new ort.Tensor('int64', BigInt64Array.of(16000n), []),
      });
      const got = await served.run({ input, input_state: new ort.Tensor('float32', batchFirst, [rows, 2, 128]) });
      expect([...(got.output?.data as Float32Array)]).toEqual([...(want.output?.data as Float32Array)]);
      expect(got.output_state?.dims).toEqual([rows, 2, 128]);
      const wantState = want.stateN?.data as Float32Array;
      const gotState = got.output_state?.data as Float32Array;
      for (let r = 0; r < rows; r++) for (let l = 0; l < 2; l++) for (let k = 0; k < 128; k++) {
        expect(gotState[(r * 2 + l) * 128 + k]).toBe(wantState[(l * rows + r) * 128 + k]);
      }
    } finally {
      await npm.release();
      await served.release();
    }
  });

  it('has a config with sequence_batching and the implicit state', () => {
    const config = fromText(ModelConfigSchema, sileroVadConfigText());
    expect(config.schedulingChoice.case).toBe('sequenceBatching');
    const sequence = config.schedulingChoice.value as { state: { inputName: string; outputName: string }[] };
    expect(sequence.state.map((s) => [s.inputName, s.outputName])).toEqual([['input_state', 'output_state']]);
    expect(config.input.map((i) => i.name)).toEqual(['input']);
  });
});
