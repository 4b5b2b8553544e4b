/**
 * The last-position outputs appended to a decoder model (last-position-outputs.ts): on the real tiny
 * decoder, in real onnxruntime, each equals the last position of its full present bit for bit, at a
 * prefill and at a decode step over a cache, and the patch leaves the model's own outputs bit for bit
 * as they were. Models the patch does not suit are left alone, with the reason.
 */
import { describe, expect, it } from 'vitest';
import * as ort from 'onnxruntime-node';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { encodeModel, OnnxDataType } from '../../example-models/onnx-writer.js';
import { buildTinyDecoderOnnx } from '../../example-models/tiny-decoder-onnx.js';
import { TINY_DECODER_SEED, TINY_DECODER_SPEC } from '../../example-models/tiny-decoder.js';
import { mulberry32 } from '../../example-models/prng.js';
import { lastPositionName, withLastPositionOutputs } from './last-position-outputs.js';
import { clashingTinyDecoder, delimited, withAppendedGraph } from '../../../test/support/patched-decoder-models.js';

const SPEC = TINY_DECODER_SPEC;
const HEADS = SPEC.kvHeads ?? SPEC.heads;
const HEAD_DIM = SPEC.hidden / SPEC.heads;
const PRESENTS = Array.from({ length: SPEC.layers }, (_, i) => [`present.${i}.key`, `present.${i}.value`]).flat();

function int64(values: number[], dims: number[]): ort.Tensor {
  return new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
}

function bits(array: Float32Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** Each present's last position, [rows, heads, 1, head_dim], copied out of the full [rows, heads, positions, head_dim]. */
function lastColumn(present: Float32Array, rows: number, positions: number): Float32Array {
  const out = new Float32Array(rows * HEADS * HEAD_DIM);
  for (let rh = 0; rh < rows * HEADS; rh++) out.set(present.subarray((rh * positions + positions - 1) * HEAD_DIM, (rh * positions + positions) * HEAD_DIM), rh * HEAD_DIM);
  return out;
}

describe('last-position outputs', () => {
  it('equal the last position of the full presents bit for bit, and leave the other outputs as they were (real tiny decoder)', async () => {
    const model = buildTinyDecoderOnnx(SPEC, TINY_DECODER_SEED);
    const patch = withLastPositionOutputs(model);
    if (!patch.ok) throw new Error(patch.why);
    expect([...patch.outputs.keys()]).toEqual(PRESENTS);
    const patched = await ort.InferenceSession.create(patch.bytes);
    const plain = await ort.InferenceSession.create(model);
    const random = mulberry32(7);
    const rows = 3;
    const prompt = 6;
    const fetch = ['logits', ...PRESENTS];
    const lastNames = PRESENTS.map(lastPositionName);
    // A prefill over `prompt` tokens, then a decode step over that cache with one padded position masked.
    const empty = Object.fromEntries(PRESENTS.map((p) => [p.replace('present', 'past_key_values'), new ort.Tensor('float32', new Float32Array(0), [rows, HEADS, 0, HEAD_DIM])]));
    const prefill = {
      input_ids: int64(Array.from({ length: rows * prompt }, () => Math.floor(random() * 256)), [rows, prompt]),
      attention_mask: int64(Array.from({ length: rows * prompt }, () => 1), [rows, prompt]),
      position_ids: int64(Array.from({ length: rows * prompt }, (_, i) => i % prompt), [rows, prompt]),
      ...empty,
    };
    const first = await patched.run(prefill, [...fetch, ...lastNames]);
    const firstPlain = await plain.run(prefill, fetch);
    for (const name of fetch) expect(bits(first[name]!.data as Float32Array).equals(bits(firstPlain[name]!.data as Float32Array))).toBe(true);
    for (const present of PRESENTS) {
      const last = first[lastPositionName(present)]!;
      expect(last.dims).toEqual([rows, HEADS, 1, HEAD_DIM]);
      expect(bits(last.data as Float32Array).equals(bits(lastColumn(first[present]!.data as Float32Array, rows, prompt)))).toBe(true);
    }
    const past = Object.fromEntries(PRESENTS.map((p) => [p.replace('present', 'past_key_values'), first[p]!]));
    const mask = Array.from({ length: rows * (prompt + 1) }, (_, i) => (i % (prompt + 1) === 2 ? 0 : 1));
    const step = {
      input_ids: int64([65, 66, 67], [rows, 1]),
      attention_mask: int64(mask, [rows, prompt + 1]),
      position_ids: int64([prompt, prompt, prompt], [rows, 1]),
      ...past,
    };
    const second = await patched.run(step, [...fetch, ...lastNames]);
    const secondPlain = await plain.run(step, ['logits']);
    expect(bits(second['logits']!.data as Float32Array).equals(bits(secondPlain['logits']!.data as Float32Array))).toBe(true);
    for (const present of PRESENTS) {
      const last = second[lastPositionName(present)]!.data as Float32Array;
      expect(bits(last).equals(bits(lastColumn(second[present]!.data as Float32Array, rows, prompt + 1)))).toBe(true);
    }
    // A decode run fetching the last positions only (as the engine does) gets the same bits.
    const only = await patched.run(step, ['logits', ...lastNames]);
    expect(Object.keys(only).sort()).toEqual(['logits', ...lastNames].sort());
    for (const name of lastNames) expect(bits(only[name]!.data as Float32Array).equals(bits(second[name]!.data as Float32Array))).toBe(true);
    await patched.release();
    await plain.release();
  });

  it('leave a model of a low opset, a clashing name, external data or no presents alone, saying why', () => {
    const identity = (opsetVersion: number, output = 'present.0.key') =>
      encodeModel({
        opsetVersion,
        graph: {
          name: 'g',
          nodes: [{ opType: 'Identity', inputs: ['x'], outputs: [output] }],
          inputs: [{ name: 'x', elemType: OnnxDataType.FLOAT, shape: [1, 1, 2, 1] }],
          outputs: [{ name: output, elemType: OnnxDataType.FLOAT, shape: [1, 1, 2, 1] }],
        },
      });
    expect(withLastPositionOutputs(identity(17)).ok).toBe(true);
    expect(withLastPositionOutputs(identity(9))).toEqual({ ok: false, why: expect.stringMatching(/opset 9 is below 10/) });
    expect(withLastPositionOutputs(identity(17, 'y'))).toEqual({ ok: false, why: expect.stringMatching(/no 'present\.\{i\}\.key\|value' outputs/) });
    expect(withLastPositionOutputs(clashingTinyDecoder())).toEqual({ ok: false, why: "the model already has a value named 'present.0.key/tessera_last_position'" });
    const constantClash = encodeModel({
      graph: {
        name: 'g',
        nodes: [{ opType: 'Identity', inputs: ['tessera_last_position/axes'], outputs: ['present.0.key'] }],
        inputs: [{ name: 'tessera_last_position/axes', elemType: OnnxDataType.FLOAT, shape: [1] }],
        outputs: [{ name: 'present.0.key', elemType: OnnxDataType.FLOAT, shape: [1] }],
      },
    });
    expect(withLastPositionOutputs(constantClash)).toEqual({ ok: false, why: expect.stringMatching(/already has a value named 'tessera_last_position\/axes'/) });
    // An initializer whose data lives in a file beside the model (TensorProto.data_location = EXTERNAL).
    const external = new BinaryWriter().tag(8, WireType.LengthDelimited).string('w').tag(14, WireType.Varint).int32(1).finish();
    expect(withLastPositionOutputs(withAppendedGraph(identity(17), delimited(5, external)))).toEqual({ ok: false, why: expect.stringMatching(/external data/) });
  });

  it('leave bytes that are not ONNX, or a truncated model, alone', () => {
    const model = buildTinyDecoderOnnx(SPEC, TINY_DECODER_SEED);
    for (const bytes of [new TextEncoder().encode('not a model'), model.subarray(0, model.byteLength >> 1), new Uint8Array(0), new Uint8Array([0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f])]) {
      const patch = withLastPositionOutputs(bytes);
      expect(patch.ok).toBe(false);
    }
  });
});
