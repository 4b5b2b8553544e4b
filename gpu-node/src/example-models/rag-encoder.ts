/**
 * `query_encoder`, the embedding model of the `rag_pipeline` example: an ONNX graph built here with
 * seeded weights (no download) that turns the bytes of a text into a unit vector, so texts sharing
 * many character trigrams point the same way:
 *
 *   bytes UINT8 [n] → ASCII lower-cased → trigram ids (a·65536 + b·256 + c) mod BUCKETS, n-2 of them
 *   → weighted embedding bag (Gather rows of E [BUCKETS, WIDTH], each times its bucket's weight, summed)
 *   → projection (MatMul W [WIDTH, DIMS]) → L2 normalized: `embedding` FP32 [DIMS]
 *
 * E and W are seeded random; the bucket weights are the inverse document frequencies of the trigrams
 * in the bundled corpus (log((N + 1) / (df + 1)), UNSEEN_WEIGHT for buckets no passage has), so the
 * trigrams every passage shares ("the", " a ") count for little and the distinctive ones decide.
 *
 * The `rag_query` step hands it the text with a space on either side, so words at the ends make
 * trigrams too and there are always at least three bytes. The same arithmetic in TypeScript
 * (`embedText`) embeds the bundled corpus when the example is written; a test checks that
 * onnxruntime's answer for a passage is the stored vector.
 */
import { configText } from './config-text.js';
import type { ExampleModel } from './example-model.js';
import { encodeModel, OnnxDataType, type OnnxInitializer, type OnnxNode } from './onnx-writer.js';
import { fillUniform } from './prng.js';
import { passageText, RAG_CORPUS } from './rag-corpus.js';

export const RAG_ENCODER_NAME = 'query_encoder';
/** A prime, so the trigram codes spread evenly over the buckets. */
export const RAG_BUCKETS = 4099;
export const RAG_WIDTH = 256;
export const RAG_DIMS = 128;
export const RAG_ENCODER_SEED = 2026;
/** Small but not 0, so a text made only of trigrams the corpus lacks still has a direction. */
const UNSEEN_WEIGHT = 0.05;

export interface RagEncoderWeights {
  /** [BUCKETS, WIDTH], row-major. */
  readonly table: Float32Array;
  /** [BUCKETS]: how much a trigram of each bucket counts. */
  readonly bucketWeights: Float32Array;
  /** [WIDTH, DIMS], row-major. */
  readonly projection: Float32Array;
}

/** The weights for a corpus (the texts the retriever searches). */
export function ragEncoderWeights(corpus: readonly string[], seed = RAG_ENCODER_SEED): RagEncoderWeights {
  const documentFrequency = new Map<number, number>();
  for (const text of corpus) {
    for (const id of new Set(trigramIds(encoderBytes(text)))) documentFrequency.set(id, (documentFrequency.get(id) ?? 0) + 1);
  }
  const bucketWeights = new Float32Array(RAG_BUCKETS).fill(UNSEEN_WEIGHT);
  for (const [id, df] of documentFrequency) bucketWeights[id] = Math.log((corpus.length + 1) / (df + 1));
  return {
    table: fillUniform(new Float32Array(RAG_BUCKETS * RAG_WIDTH), seed, 1),
    bucketWeights,
    projection: fillUniform(new Float32Array(RAG_WIDTH * RAG_DIMS), seed + 1, Math.sqrt(3 / RAG_WIDTH)),
  };
}

/** The bytes the encoder is given for a text: its UTF-8 with a space on either side. */
export function encoderBytes(text: string): Uint8Array {
  return new TextEncoder().encode(` ${text} `);
}

/** The trigram bucket ids of `bytes`, as the graph computes them. */
export function trigramIds(bytes: Uint8Array): number[] {
  const lower = Array.from(bytes, (b) => (b >= 65 && b <= 90 ? b + 32 : b));
  const ids: number[] = [];
  for (let i = 0; i + 2 < lower.length; i++) {
    ids.push(((lower[i] as number) * 65536 + (lower[i + 1] as number) * 256 + (lower[i + 2] as number)) % RAG_BUCKETS);
  }
  return ids;
}

/** The encoder's arithmetic in TypeScript: the embedding of the bytes `encoderBytes(text)`. */
export function embedText(text: string, weights: RagEncoderWeights): Float32Array {
  const ids = trigramIds(encoderBytes(text));
  const bag = new Float64Array(RAG_WIDTH);
  for (const id of ids) {
    const weight = weights.bucketWeights[id] as number;
    for (let j = 0; j < RAG_WIDTH; j++) bag[j] = (bag[j] as number) + weight * (weights.table[id * RAG_WIDTH + j] as number);
  }
  const projected = new Float64Array(RAG_DIMS);
  for (let j = 0; j < RAG_WIDTH; j++) {
    const x = bag[j] as number;
    for (let k = 0; k < RAG_DIMS; k++) projected[k] = (projected[k] as number) + x * (weights.projection[j * RAG_DIMS + k] as number);
  }
  const norm = Math.sqrt(projected.reduce((sum, v) => sum + v * v, 0));
  return Float32Array.from(projected, (v) => v / norm);
}

const int64 = (name: string, values: readonly bigint[], dims: readonly number[] = [values.length]): OnnxInitializer => ({
  name,
  dims,
  data: BigInt64Array.from(values),
});

export function buildRagEncoderOnnx(weights: RagEncoderWeights): Uint8Array {
  const initializers: OnnxInitializer[] = [
    { name: 'table', dims: [RAG_BUCKETS, RAG_WIDTH], data: weights.table },
    { name: 'bucket_weights', dims: [RAG_BUCKETS], data: weights.bucketWeights },
    { name: 'projection', dims: [RAG_WIDTH, RAG_DIMS], data: weights.projection },
    int64('upper_min', [64n], []),
    int64('upper_max', [91n], []),
    int64('to_lower', [32n], []),
    int64('shift16', [65536n], []),
    int64('shift8', [256n], []),
    int64('buckets', [BigInt(RAG_BUCKETS)], []),
    int64('zero', [0n]),
    int64('one', [1n]),
    int64('two', [2n]),
    int64('minus_one', [-1n]),
    int64('minus_two', [-2n]),
    int64('to_end', [2n ** 63n - 1n]),
    int64('flat', [-1n]),
  ];
  const node = (opType: string, inputs: string[], output: string, attributes: OnnxNode['attributes'] = []): OnnxNode => ({
    opType,
    name: output,
    inputs,
    outputs: [output],
    attributes,
  });
  const nodes: OnnxNode[] = [
    node('Cast', ['query_bytes'], 'codes', [{ name: 'to', type: 'int', value: OnnxDataType.INT64 }]),
    node('Greater', ['codes', 'upper_min'], 'above_a'),
    node('Less', ['codes', 'upper_max'], 'below_z'),
    node('And', ['above_a', 'below_z'], 'is_upper'),
    node('Add', ['codes', 'to_lower'], 'lowered'),
    node('Where', ['is_upper', 'lowered', 'codes'], 'lower'),
    node('Slice', ['lower', 'zero', 'minus_two'], 'first'),
    node('Slice', ['lower', 'one', 'minus_one'], 'second'),
    node('Slice', ['lower', 'two', 'to_end'], 'third'),
    node('Mul', ['first', 'shift16'], 'first_shifted'),
    node('Mul', ['second', 'shift8'], 'second_shifted'),
    node('Add', ['first_shifted', 'second_shifted'], 'pair'),
    node('Add', ['pair', 'third'], 'trigram'),
    node('Mod', ['trigram', 'buckets'], 'ids'),
    node('Gather', ['table', 'ids'], 'rows'),
    node('Gather', ['bucket_weights', 'ids'], 'row_weights'),
    node('Unsqueeze', ['row_weights', 'one'], 'row_weight_column'),
    node('Mul', ['rows', 'row_weight_column'], 'weighted_rows'),
    node('ReduceSum', ['weighted_rows', 'zero'], 'bag', [{ name: 'keepdims', type: 'int', value: 1 }]),
    node('MatMul', ['bag', 'projection'], 'projected'),
    node('LpNormalization', ['projected'], 'normalized', [
      { name: 'axis', type: 'int', value: -1 },
      { name: 'p', type: 'int', value: 2 },
    ]),
    node('Reshape', ['normalized', 'flat'], 'embedding'),
  ];
  return encodeModel({
    producerName: 'tessera-example-models',
    docString: `${RAG_ENCODER_NAME}: weighted trigram embedding bag ${RAG_BUCKETS}x${RAG_WIDTH} → ${RAG_DIMS}, L2 normalized`,
    graph: {
      name: RAG_ENCODER_NAME,
      nodes,
      initializers,
      inputs: [{ name: 'query_bytes', elemType: OnnxDataType.UINT8, shape: ['bytes'] }],
      outputs: [{ name: 'embedding', elemType: OnnxDataType.FLOAT, shape: [RAG_DIMS] }],
    },
  });
}

export function ragEncoderConfigText(): string {
  return configText({
    name: RAG_ENCODER_NAME,
    platform: 'onnxruntime_onnx',
    maxBatchSize: 0,
    inputs: [{ name: 'query_bytes', dataType: 'TYPE_UINT8', dims: [-1] }],
    outputs: [{ name: 'embedding', dataType: 'TYPE_FP32', dims: [RAG_DIMS] }],
    instanceGroups: [{ count: 1, kind: 'KIND_CPU' }],
  });
}

export const ragEncoderModel: ExampleModel = {
  name: RAG_ENCODER_NAME,
  description: `ONNX text embedding (trigram bag → ${RAG_DIMS}-d unit vector, seeded weights); rag_pipeline step 1`,
  build: async () => [
    { path: 'config.pbtxt', contents: ragEncoderConfigText() },
    { path: '1/model.onnx', contents: buildRagEncoderOnnx(ragEncoderWeights(RAG_CORPUS.map(passageText))) },
  ],
};
