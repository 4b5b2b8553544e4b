// tiny_decoder's twin in the GroupQueryAttention layout: the same spec and seed, so the same weights drawn
// in the same order as gpu-node/src/example-models/tiny-decoder-onnx.ts, but each layer's attention is one
// com.microsoft.GroupQueryAttention node whose past and present caches may share one capacity buffer
// [batch, kv_heads, capacity, head_dim] (right-padded: row b's cache holds sum(attention_mask[b]) - 1 positions).
import { encodeModel, OnnxDataType } from '../../../gpu-node/src/example-models/onnx-writer.ts';
import { fillUniform } from '../../../gpu-node/src/example-models/prng.ts';
import { withMicrosoftOpset } from './gqa-model.mjs';

export function buildGqaDecoderOnnx(spec, seed) {
  const { layers, hidden, heads, ffn, vocab, maxPositions } = spec;
  const headDim = hidden / heads;
  const kvHeads = spec.kvHeads ?? heads;
  const nodes = [];
  const inits = [];
  let seedCounter = seed * 1000;
  const weight = (name, dims, limit) => {
    inits.push({ name, dims, data: fillUniform(new Float32Array(dims.reduce((a, b) => a * b, 1)), seedCounter++, limit) });
    return name;
  };
  const constant = (name, dims, data) => (inits.push({ name, dims, data }), name);
  const node = (opType, inputs, output, attributes, domain) => {
    nodes.push({ opType, inputs, outputs: [output], name: output, ...(attributes ? { attributes } : {}), ...(domain ? { domain } : {}) });
    return output;
  };
  constant('c_one', [], BigInt64Array.of(1n));
  constant('c_axes1', [1], BigInt64Array.of(1n));
  constant('zeros_hidden', [hidden], new Float32Array(hidden));
  const tokEmb = weight('embed_tokens', [vocab, hidden], 1);
  const posEmb = weight('embed_positions', [maxPositions, hidden], 0.5);
  let x = node('Add', [node('Gather', [tokEmb, 'input_ids'], 'tok_embedded'), node('Gather', [posEmb, 'position_ids'], 'pos_embedded')], 'h0');
  // GQA's own length inputs, as onnxruntime-genai's builder derives them from the attention mask.
  const int32 = [{ name: 'to', type: 'int', value: OnnxDataType.INT32 }];
  node('Cast', [node('Sub', [node('ReduceSum', ['attention_mask', 'c_axes1'], 'mask_sum', [{ name: 'keepdims', type: 'int', value: 0 }]), 'c_one'], 'seqlens_k_64')], 'seqlens_k', int32);
  node('Cast', [node('Gather', [node('Shape', ['attention_mask'], 'mask_shape'), 'c_one'], 'total_len_64')], 'total_len', int32);
  const layerNorm = (input, name) => {
    const gamma = fillUniform(new Float32Array(hidden), seedCounter++, 0.1).map((g) => 1 + g);
    return node('LayerNormalization', [input, constant(`${name}.gamma`, [hidden], gamma), 'zeros_hidden'], name, [{ name: 'axis', type: 'int', value: -1 }]);
  };
  const projection = (input, name, inDim, outDim) => node('MatMul', [input, weight(`${name}.weight`, [inDim, outDim], Math.sqrt(3 / inDim))], name);
  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}`;
    const h = layerNorm(x, `${p}.attn_norm`);
    const k = projection(h, `${p}.k_proj`, hidden, kvHeads * headDim);
    const v = projection(h, `${p}.v_proj`, hidden, kvHeads * headDim);
    const q = projection(h, `${p}.q_proj`, hidden, hidden);
    nodes.push({ opType: 'GroupQueryAttention', domain: 'com.microsoft', name: `${p}.gqa`,
      inputs: [q, k, v, `past_key_values.${l}.key`, `past_key_values.${l}.value`, 'seqlens_k', 'total_len'],
      outputs: [`${p}.attn`, `present.${l}.key`, `present.${l}.value`],
      attributes: [{ name: 'num_heads', type: 'int', value: heads }, { name: 'kv_num_heads', type: 'int', value: kvHeads }] });
    x = node('Add', [x, projection(`${p}.attn`, `${p}.o_proj`, hidden, hidden)], `${p}.after_attn`);
    const h2 = layerNorm(x, `${p}.mlp_norm`);
    const up = node('Relu', [projection(h2, `${p}.up_proj`, hidden, ffn)], `${p}.up_relu`);
    x = node('Add', [x, projection(up, `${p}.down_proj`, ffn, hidden)], `${p}.out`);
  }
  const final = layerNorm(x, 'final_norm');
  const lmHead = weight('lm_head.weight', [hidden, vocab], 4 * Math.sqrt(3 / hidden));
  const logitBias = new Float32Array(vocab);
  for (let id = 32; id <= 126 && id < vocab; id++) logitBias[id] = spec.asciiBias ?? 0;
  if (spec.eosId !== undefined) logitBias[spec.eosId] = spec.eosBias ?? 0;
  constant('lm_head.bias', [vocab], logitBias);
  node('Add', [node('MatMul', [final, lmHead], 'lm_logits'), 'lm_head.bias'], 'logits');
  const kv = (name, len) => ({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', kvHeads, len, headDim] });
  return withMicrosoftOpset(encodeModel({
    producerName: 'gqa21-probe',
    graph: {
      name: 'tiny_decoder_gqa', nodes, initializers: inits,
      inputs: [
        { name: 'input_ids', elemType: OnnxDataType.INT64, shape: ['batch', 'sequence'] },
        { name: 'attention_mask', elemType: OnnxDataType.INT64, shape: ['batch', 'total_sequence'] },
        { name: 'position_ids', elemType: OnnxDataType.INT64, shape: ['batch', 'sequence'] },
        ...Array.from({ length: layers }, (_, l) => [kv(`past_key_values.${l}.key`, 'capacity'), kv(`past_key_values.${l}.value`, 'capacity')]).flat(),
      ],
      outputs: [
        { name: 'logits', elemType: OnnxDataType.FLOAT, shape: ['batch', 'sequence', vocab] },
        ...Array.from({ length: layers }, (_, l) => [kv(`present.${l}.key`, 'capacity'), kv(`present.${l}.value`, 'capacity')]).flat(),
      ],
    },
  }));
}
