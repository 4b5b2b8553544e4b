/**
 * A small decoder-only transformer in the common cached-attention ONNX layout (the layout Hugging Face
 * Optimum exports): inputs `input_ids` [batch, seq], `attention_mask` [batch, past+seq], `position_ids`
 * [batch, seq], `past_key_values.{i}.key|value` [batch, heads, past, head_dim]; outputs `logits`
 * [batch, seq, vocab] and `present.{i}.key|value` [batch, heads, past+seq, head_dim].
 *
 * Each layer: pre-LayerNorm multi-head self-attention (the new keys and values are appended to the past,
 * a causal mask plus the attention mask decide what each query sees) and a pre-LayerNorm ReLU MLP, both
 * residual. The weights are seeded, so its text is gibberish, but its arithmetic is that of a real model.
 */
import type { OnnxInitializer, OnnxNode } from './onnx-writer.js';
import { encodeModel, OnnxDataType } from './onnx-writer.js';
import { fillUniform } from './prng.js';

export interface TinyDecoderSpec {
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  /**
   * Key/value heads: `heads` (multi-head) or 1 (multi-query: one key/value head shared by every query
   * head, broadcast by MatMul), which makes the cache `heads` times smaller, as GQA models do.
   */
  readonly kvHeads?: number;
  readonly ffn: number;
  readonly vocab: number;
  /** Most positions (the position table's rows): the model's context. */
  readonly maxPositions: number;
  /** Added to this token's logit (the end-of-sequence token gets a negative one, so answers are not all empty). */
  readonly eosId?: number;
  readonly eosBias?: number;
  /** Added to the logits of printable ASCII bytes (ids 32..126), so the gibberish is mostly readable. */
  readonly asciiBias?: number;
}

const MASKED = -1e9;

export function buildTinyDecoderOnnx(spec: TinyDecoderSpec, seed: number): Uint8Array {
  const { layers, hidden, heads, ffn, vocab, maxPositions } = spec;
  if (hidden % heads !== 0) throw new Error('hidden must be a multiple of heads');
  const headDim = hidden / heads;
  const kvHeads = spec.kvHeads ?? heads;
  if (kvHeads !== heads && kvHeads !== 1) throw new Error('kvHeads must be heads or 1');
  const nodes: OnnxNode[] = [];
  const inits: OnnxInitializer[] = [];
  let seedCounter = seed * 1000;
  const weight = (name: string, dims: number[], limit: number): string => {
    const count = dims.reduce((a, b) => a * b, 1);
    inits.push({ name, dims, data: fillUniform(new Float32Array(count), seedCounter++, limit) });
    return name;
  };
  const constant = (name: string, dims: number[], data: Float32Array | BigInt64Array): string => {
    inits.push({ name, dims, data });
    return name;
  };
  const node = (opType: string, inputs: string[], output: string, attributes?: OnnxNode['attributes']): string => {
    nodes.push({ opType, inputs, outputs: [output], name: output, ...(attributes ? { attributes } : {}) });
    return output;
  };
  const i64 = (values: number[]) => BigInt64Array.from(values.map(BigInt));

  constant('c_zero', [], i64([0]));
  constant('c_one', [], i64([1]));
  constant('c_axes0', [1], i64([0]));
  constant('c_axes1', [1], i64([1]));
  constant('c_axes12', [2], i64([1, 2]));
  constant('c_split_kv_heads', [4], i64([0, 0, kvHeads, headDim]));
  if (kvHeads === 1) {
    // Reshape targets of the one-key/value-head path (0 keeps the input's size of that axis).
    constant('c_queries_as_rows', [4], i64([0, 1, -1, headDim]));
    constant('c_rows_by_position', [4], i64([0, -1, heads, 0]));
    constant('c_rows_joined', [4], i64([0, 1, -1, 0]));
    constant('c_merge_rows', [3], i64([0, -1, hidden]));
  } else {
    constant('c_split_heads', [4], i64([0, 0, heads, headDim]));
    constant('c_merge_heads', [3], i64([0, 0, hidden]));
  }
  constant('c_open', [], new Float32Array([0]));
  constant('c_masked', [], new Float32Array([MASKED]));
  constant('c_scale', [], new Float32Array([1 / Math.sqrt(headDim)]));
  constant('zeros_hidden', [hidden], new Float32Array(hidden));

  // Embeddings: token plus learned position.
  const tokEmb = weight('embed_tokens', [vocab, hidden], 1);
  const posEmb = weight('embed_positions', [maxPositions, hidden], 0.5);
  const tokens = node('Gather', [tokEmb, 'input_ids'], 'tok_embedded');
  const positions = node('Gather', [posEmb, 'position_ids'], 'pos_embedded');
  let x = node('Add', [tokens, positions], 'h0');

  // Mask [batch, 1, seq, total]: key j is visible to query i when j - i <= past (causal, with the new
  // tokens after the past) and the attention mask marks j as real.
  const total = node('Gather', [node('Shape', ['attention_mask'], 'mask_shape'), 'c_one'], 'total_len');
  const seqLen = node('Gather', [node('Shape', ['input_ids'], 'ids_shape'), 'c_one'], 'seq_len');
  const past = node('Sub', [total, seqLen], 'past_len');
  const cols = node('Unsqueeze', [node('Range', ['c_zero', total, 'c_one'], 'key_index'), 'c_axes0'], 'key_row');
  const rows = node('Unsqueeze', [node('Range', ['c_zero', seqLen, 'c_one'], 'query_index'), 'c_axes1'], 'query_col');
  const causal = node('LessOrEqual', [node('Sub', [cols, rows], 'key_minus_query'), past], 'causal_ok');
  const padding = node('Unsqueeze', [node('Cast', ['attention_mask'], 'mask_bool', [{ name: 'to', type: 'int', value: OnnxDataType.BOOL }]), 'c_axes12'], 'padding_ok');
  const visible = node('And', [causal, padding], 'visible');
  const bias = node('Where', [visible, 'c_open', 'c_masked'], 'attention_bias');
  // [batch, seq, 1, total]: the same mask for every head of a position (the one-key/value-head path).
  const biasByPosition = kvHeads === 1 ? node('Transpose', [bias], 'attention_bias_by_position', [{ name: 'perm', type: 'ints', value: [0, 2, 1, 3] }]) : '';

  // gamma = 1 + small noise, so every norm is slightly different but none flattens its input.
  const layerNorm = (input: string, name: string): string => {
    const gamma = fillUniform(new Float32Array(hidden), seedCounter++, 0.1).map((g) => 1 + g);
    return node('LayerNormalization', [input, constant(`${name}.gamma`, [hidden], gamma), 'zeros_hidden'], name, [
      { name: 'axis', type: 'int', value: -1 },
    ]);
  };
  const projection = (input: string, name: string, inDim: number, outDim: number): string =>
    node('MatMul', [input, weight(`${name}.weight`, [inDim, outDim], Math.sqrt(3 / inDim))], name);
  const splitHeads = (input: string, name: string, shape = 'c_split_heads'): string =>
    node('Transpose', [node('Reshape', [input, shape], `${name}_4d`)], name, [{ name: 'perm', type: 'ints', value: [0, 2, 1, 3] }]);

  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}`;
    const h = layerNorm(x, `${p}.attn_norm`);
    const k = splitHeads(projection(h, `${p}.k_proj`, hidden, kvHeads * headDim), `${p}.k`, 'c_split_kv_heads');
    const v = splitHeads(projection(h, `${p}.v_proj`, hidden, kvHeads * headDim), `${p}.v`, 'c_split_kv_heads');
    const keys = node('Concat', [`past_key_values.${l}.key`, k], `present.${l}.key`, [{ name: 'axis', type: 'int', value: 2 }]);
    const values = node('Concat', [`past_key_values.${l}.value`, v], `present.${l}.value`, [{ name: 'axis', type: 'int', value: 2 }]);
    const keysT = node('Transpose', [keys], `${p}.keys_t`, [{ name: 'perm', type: 'ints', value: [0, 1, 3, 2] }]);
    const queries = projection(h, `${p}.q_proj`, hidden, hidden);
    let merged: string;
    if (kvHeads === 1) {
      // One key/value head: every query head of every position is a row of one matrix per sequence
      // ([seq × heads, head_dim]), so attention is one small GEMM per sequence, not one per head.
      const q = node('Reshape', [queries, 'c_queries_as_rows'], `${p}.q_rows`);
      const scores = node('Reshape', [node('Mul', [node('MatMul', [q, keysT], `${p}.qk`), 'c_scale'], `${p}.scaled`), 'c_rows_by_position'], `${p}.scores_4d`);
      const probs = node('Softmax', [node('Add', [scores, biasByPosition], `${p}.scores`)], `${p}.probs`, [{ name: 'axis', type: 'int', value: -1 }]);
      const context = node('MatMul', [node('Reshape', [probs, 'c_rows_joined'], `${p}.probs_rows`), values], `${p}.context`);
      merged = node('Reshape', [context, 'c_merge_rows'], `${p}.merged`);
    } else {
      const q = splitHeads(queries, `${p}.q`);
      const scores = node('Add', [node('Mul', [node('MatMul', [q, keysT], `${p}.qk`), 'c_scale'], `${p}.scaled`), bias], `${p}.scores`);
      const probs = node('Softmax', [scores], `${p}.probs`, [{ name: 'axis', type: 'int', value: -1 }]);
      const context = node('MatMul', [probs, values], `${p}.context`);
      merged = node('Reshape', [node('Transpose', [context], `${p}.context_t`, [{ name: 'perm', type: 'ints', value: [0, 2, 1, 3] }]), 'c_merge_heads'], `${p}.merged`);
    }
    x = node('Add', [x, projection(merged, `${p}.o_proj`, hidden, hidden)], `${p}.after_attn`);
    const h2 = layerNorm(x, `${p}.mlp_norm`);
    const up = node('Relu', [projection(h2, `${p}.up_proj`, hidden, ffn)], `${p}.up_relu`);
    x = node('Add', [x, projection(up, `${p}.down_proj`, ffn, hidden)], `${p}.out`);
  }
  const final = layerNorm(x, 'final_norm');
  // A wide output projection spreads the logits, so greedy picks are rarely near-ties.
  const lmHead = weight('lm_head.weight', [hidden, vocab], 4 * Math.sqrt(3 / hidden));
  const logitBias = new Float32Array(vocab);
  for (let id = 32; id <= 126 && id < vocab; id++) logitBias[id] = spec.asciiBias ?? 0;
  if (spec.eosId !== undefined) logitBias[spec.eosId] = spec.eosBias ?? 0;
  constant('lm_head.bias', [vocab], logitBias);
  node('Add', [node('MatMul', [final, lmHead], 'lm_logits'), 'lm_head.bias'], 'logits');

  const kvShape = ['batch', kvHeads, 'past_sequence', headDim];
  const presentShape = ['batch', kvHeads, 'total_sequence', headDim];
  return encodeModel({
    producerName: 'tessera-example-models',
    docString: `tiny decoder: ${layers} layers, hidden ${hidden}, ${heads} heads (${kvHeads} key/value), vocab ${vocab}, seed ${seed}`,
    graph: {
      name: 'tiny_decoder',
      nodes,
      initializers: inits,
      inputs: [
        { name: 'input_ids', elemType: OnnxDataType.INT64, shape: ['batch', 'sequence'] },
        { name: 'attention_mask', elemType: OnnxDataType.INT64, shape: ['batch', 'total_sequence'] },
        { name: 'position_ids', elemType: OnnxDataType.INT64, shape: ['batch', 'sequence'] },
        ...Array.from({ length: layers }, (_, l) => [
          { name: `past_key_values.${l}.key`, elemType: OnnxDataType.FLOAT, shape: kvShape },
          { name: `past_key_values.${l}.value`, elemType: OnnxDataType.FLOAT, shape: kvShape },
        ]).flat(),
      ],
      outputs: [
        { name: 'logits', elemType: OnnxDataType.FLOAT, shape: ['batch', 'sequence', vocab] },
        ...Array.from({ length: layers }, (_, l) => [
          { name: `present.${l}.key`, elemType: OnnxDataType.FLOAT, shape: presentShape },
          { name: `present.${l}.value`, elemType: OnnxDataType.FLOAT, shape: presentShape },
        ]).flat(),
      ],
    },
  });
}
