import { describe, expect, it } from 'vitest';
import { decoderLayoutOf, type ValueInfo } from './decoder-layout.js';

const ids = (name: string): ValueInfo => ({ name, type: 'int64', shape: ['batch', 'sequence'] });
const kv = (name: string, heads: number | string = 4, dim: number | string = 16): ValueInfo => ({ name, type: 'float32', shape: ['batch', heads, 'past', dim] });
const inputs = (layers: number): ValueInfo[] => [
  ids('input_ids'),
  ids('attention_mask'),
  ids('position_ids'),
  ...Array.from({ length: layers }, (_, i) => [kv(`past_key_values.${i}.key`), kv(`past_key_values.${i}.value`)]).flat(),
];
const outputs = (layers: number): ValueInfo[] => [
  { name: 'logits', type: 'float32', shape: ['batch', 'sequence', 100] },
  ...Array.from({ length: layers }, (_, i) => [kv(`present.${i}.key`), kv(`present.${i}.value`)]).flat(),
];

describe('decoder layout', () => {
  it('reads layers, heads and head_dim from a model in the layout', () => {
    expect(decoderLayoutOf('m', inputs(3), outputs(3))).toEqual({ layers: 3, heads: 4, headDim: 16 });
  });

  it('names what is wrong', () => {
    const fail = (i: ValueInfo[], o: ValueInfo[], pattern: RegExp) => expect(() => decoderLayoutOf('m', i, o)).toThrow(pattern);
    fail(inputs(2).filter((v) => v.name !== 'position_ids'), outputs(2), /input 'position_ids' is missing/);
    fail(inputs(2).map((v) => (v.name === 'input_ids' ? { ...v, type: 'int32' } : v)), outputs(2), /input 'input_ids' must be int64, is int32/);
    fail(inputs(2).filter((v) => v.name !== 'past_key_values.1.value'), outputs(2), /input 'past_key_values.1.value' is missing/);
    fail(inputs(2), outputs(2).filter((v) => v.name !== 'present.1.key'), /output 'present.1.key' is missing/);
    fail(inputs(2), outputs(2).filter((v) => v.name !== 'logits'), /output 'logits' is missing/);
    fail([...inputs(2), ids('token_type_ids')], outputs(2), /unexpected input 'token_type_ids'/);
    fail(inputs(0), outputs(0), /no 'past_key_values/);
    fail(inputs(2).map((v) => (v.name === 'past_key_values.1.key' ? kv(v.name, 8) : v)), outputs(2), /other layers have 4 heads of 16/);
    fail(inputs(1).map((v) => (v.name.startsWith('past') ? { ...v, type: 'float16' } : v)), outputs(1), /must be float32, is float16/);
  });

  it('takes heads and head_dim from parameters when the model leaves them symbolic', () => {
    const symbolic = inputs(1).map((v) => (v.name.startsWith('past') ? kv(v.name, 'heads', 'dim') : v));
    expect(() => decoderLayoutOf('m', symbolic, outputs(1))).toThrow(/set the config parameters 'num_heads' and 'head_dim'/);
    expect(decoderLayoutOf('m', symbolic, outputs(1), { heads: 2, headDim: 8 })).toEqual({ layers: 1, heads: 2, headDim: 8 });
  });
});
