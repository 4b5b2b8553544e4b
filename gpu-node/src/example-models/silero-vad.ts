/**
 * `silero_vad`: Silero's voice-activity detector (v5, from the `@ricky0123/vad-web` npm package), served
 * with the sequence batcher and implicit state. The stateful model the sequence batcher exists for: the
 * LSTM state of one 512-sample chunk must be fed to the next chunk of the same audio stream.
 *
 * The npm graph cannot be served by a Triton-style onnxruntime backend as it is, for two reasons:
 * - `sr` is an int64 scalar. A batching model (max_batch_size > 0) gets a batch dimension on every
 *   input, and Triton has no way to inject a constant, so no request could ever supply it.
 * - `state` / `stateN` are [2, batch, 128]: batched along dim 1, while Triton batches along dim 0.
 * So the ONNX file is rewritten when the repository is written, exactly as a Triton user must re-export
 * it: `sr` becomes an initializer (16000: the model serves 16 kHz audio; the 8 kHz branch of the graph
 * is folded away by onnxruntime), and the state is exposed batch-first through two Transpose nodes:
 * `input_state` [batch, 2, 128] → `state`, and `stateN` → `output_state` [batch, 2, 128]. Every
 * original node, weight and subgraph is copied byte for byte, so per stream the model computes what
 * the npm file computes (the end-to-end test checks it against the original file to 1e-5).
 *
 * The config declares only `input` [512] → `output` [1]; `input_state`/`output_state` are the
 * sequence batcher's implicit state (zero initial state), invisible to clients.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { ExampleModel } from './example-model.js';
import { encodeInitializer, encodeNode, encodeValueInfo, OnnxDataType } from './onnx-writer.js';

/** Samples per chunk the example is configured for (32 ms at 16 kHz, what Silero v5 is trained on). */
export const SILERO_CHUNK_SAMPLES = 512;
export const SILERO_SAMPLE_RATE = 16_000;
/** The LSTM state per stream: [2, 128] (the npm graph's [2, batch, 128] without its batch axis). */
export const SILERO_STATE_DIMS = [2, 128] as const;

/** Where npm put the original model (resolved from the package's main entry, `dist/index.js`). */
export function sileroVadNpmPath(): string {
  const main = createRequire(import.meta.url).resolve('@ricky0123/vad-web');
  return join(dirname(main), 'silero_vad_v5.onnx');
}

// ModelProto.graph, GraphProto.{node, initializer, input, output}, ValueInfoProto.name.
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const VALUE_INFO_NAME = 1;

interface RawField {
  readonly fieldNo: number;
  /** The whole field: tag, length prefix and value, as found. */
  readonly raw: Uint8Array;
  /** The value of a length-delimited field. */
  readonly value?: Uint8Array;
}

/** Splits a message into its top-level fields without decoding them. */
function rawFields(message: Uint8Array): RawField[] {
  const reader = new BinaryReader(message);
  const fields: RawField[] = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const [fieldNo, wireType] = reader.tag();
    const value = wireType === WireType.LengthDelimited ? reader.bytes() : (reader.skip(wireType, fieldNo), undefined);
    fields.push({ fieldNo, raw: message.subarray(start, reader.pos), ...(value === undefined ? {} : { value }) });
  }
  return fields;
}

function valueInfoName(valueInfo: Uint8Array): string {
  const field = rawFields(valueInfo).find((f) => f.fieldNo === VALUE_INFO_NAME);
  return field?.value === undefined ? '' : new TextDecoder().decode(field.value);
}

function delimitedField(fieldNo: number, value: Uint8Array): Uint8Array {
  return new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).bytes(value).finish();
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

const TO_BATCH_MIDDLE = [1, 0, 2];
const stateInfo = (name: string) => ({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', ...SILERO_STATE_DIMS] });

function rewriteGraph(graph: Uint8Array): Uint8Array {
  const kept: Uint8Array[] = [];
  const found = new Set<string>();
  for (const field of rawFields(graph)) {
    if ((field.fieldNo === GRAPH_INPUT || field.fieldNo === GRAPH_OUTPUT) && field.value !== undefined) {
      const name = valueInfoName(field.value);
      found.add(name);
      if (name === 'sr' || name === 'state' || name === 'stateN') continue;
    }
    kept.push(field.raw);
  }
  for (const name of ['input', 'sr', 'state', 'output', 'stateN']) {
    if (!found.has(name)) throw new Error(`silero_vad: the npm model has no graph input or output '${name}'`);
  }
  // Repeated fields keep the order they appear in: the input Transpose goes first among the nodes (ONNX
  // wants nodes in topological order), the output Transpose after every original node.
  const nodeIn = encodeNode({
    opType: 'Transpose',
    name: 'tessera_state_to_batch_middle',
    inputs: ['input_state'],
    outputs: ['state'],
    attributes: [{ name: 'perm', type: 'ints', value: TO_BATCH_MIDDLE }],
  });
  const nodeOut = encodeNode({
    opType: 'Transpose',
    name: 'tessera_state_to_batch_first',
    inputs: ['stateN'],
    outputs: ['output_state'],
    attributes: [{ name: 'perm', type: 'ints', value: TO_BATCH_MIDDLE }],
  });
  const sr = encodeInitializer({ name: 'sr', dims: [], data: BigInt64Array.of(BigInt(SILERO_SAMPLE_RATE)) });
  return concat([
    delimitedField(GRAPH_NODE, nodeIn),
    ...kept,
    delimitedField(GRAPH_NODE, nodeOut),
    delimitedField(GRAPH_INITIALIZER, sr),
    delimitedField(GRAPH_INPUT, encodeValueInfo(stateInfo('input_state'))),
    delimitedField(GRAPH_OUTPUT, encodeValueInfo(stateInfo('output_state'))),
  ]);
}

/** The npm model's bytes → the Triton-servable model described above. */
export function rewriteSileroVadOnnx(original: Uint8Array): Uint8Array {
  const fields = rawFields(original);
  if (!fields.some((f) => f.fieldNo === MODEL_GRAPH)) throw new Error('silero_vad: the npm model has no graph');
  return concat(
    fields.map((f) => (f.fieldNo === MODEL_GRAPH && f.value !== undefined ? delimitedField(MODEL_GRAPH, rewriteGraph(f.value)) : f.raw)),
  );
}

export function sileroVadConfigText(): string {
  // configText() has no sequence_batching, so the text is written out; it is the whole point of the model.
  return `name: "silero_vad"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "input"
    data_type: TYPE_FP32
    dims: [ ${SILERO_CHUNK_SAMPLES} ]
  }
]
output [
  {
    name: "output"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }
]
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  direct { }
  state [
    {
      input_name: "input_state"
      output_name: "output_state"
      data_type: TYPE_FP32
      dims: [ ${SILERO_STATE_DIMS.join(', ')} ]
      initial_state: {
        data_type: TYPE_FP32
        dims: [ ${SILERO_STATE_DIMS.join(', ')} ]
        zero_data: true
        name: "silence"
      }
    }
  ]
}
instance_group [
  {
    count: 1
    kind: KIND_CPU
  }
]
`;
}

export const sileroVadModel: ExampleModel = {
  name: 'silero_vad',
  description: 'Silero VAD v5: FP32 [512] chunk of 16 kHz audio → speech probability, sequence batching with implicit LSTM state',
  build: async () => [
    { path: 'config.pbtxt', contents: sileroVadConfigText() },
    { path: '1/model.onnx', contents: rewriteSileroVadOnnx(new Uint8Array(await readFile(sileroVadNpmPath()))) },
  ],
};
