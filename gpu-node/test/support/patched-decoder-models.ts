/** Decoder models for the last-position patch's tests (last-position-outputs.ts): wire-level edits of the tiny decoder. */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { encodeNode, encodeValueInfo, OnnxDataType } from '../../src/example-models/onnx-writer.js';
import { buildTinyDecoderOnnx } from '../../src/example-models/tiny-decoder-onnx.js';
import { TINY_DECODER_SEED, TINY_DECODER_SPEC } from '../../src/example-models/tiny-decoder.js';
import { lastPositionName } from '../../src/backends/onnxruntime-llm/last-position-outputs.js';

const SPEC = TINY_DECODER_SPEC;
const HEADS = SPEC.kvHeads ?? SPEC.heads;
const HEAD_DIM = SPEC.hidden / SPEC.heads;

/** `model` with one more graph appended (field 7: merged into the first by protobuf). */
export function withAppendedGraph(model: Uint8Array, graph: Uint8Array): Uint8Array {
  const field = new BinaryWriter().tag(7, WireType.LengthDelimited).uint32(graph.byteLength).finish();
  return Buffer.concat([model, field, graph]);
}

export function delimited(fieldNo: number, bytes: Uint8Array): Uint8Array {
  return Buffer.concat([new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).uint32(bytes.byteLength).finish(), bytes]);
}

/** The tiny decoder with an extra output already named as the patch would name one: the patch must not apply. */
export function clashingTinyDecoder(): Uint8Array {
  const name = lastPositionName('present.0.key');
  const graph = Buffer.concat([
    delimited(1, encodeNode({ opType: 'Identity', inputs: ['present.0.key'], outputs: [name], name })),
    delimited(12, encodeValueInfo({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', HEADS, 'total', HEAD_DIM] })),
  ]);
  return withAppendedGraph(buildTinyDecoderOnnx(SPEC, TINY_DECODER_SEED), graph);
}

