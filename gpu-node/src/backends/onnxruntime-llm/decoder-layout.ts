/**
 * The cached-attention layout a decoder model must have, checked against the session's declared inputs
 * and outputs at load: `input_ids`, `attention_mask`, `position_ids` (int64) and
 * `past_key_values.{i}.key|value` (float32, [batch, heads, past, head_dim]) for i = 0..layers-1 in;
 * `logits` and `present.{i}.key|value` out. A model that differs fails its load with a message naming
 * what is missing or wrong.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export interface ValueInfo {
  readonly name: string;
  /** onnxruntime's type name: 'int64', 'float32', ... */
  readonly type: string;
  readonly shape: readonly (number | string)[];
}

export interface DecoderLayout {
  readonly layers: number;
  readonly heads: number;
  readonly headDim: number;
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;

export interface LayoutOverrides {
  /** For models whose KV inputs leave heads or head_dim symbolic. */
  readonly heads?: number;
  readonly headDim?: number;
}

export function decoderLayoutOf(model: string, inputs: readonly ValueInfo[], outputs: readonly ValueInfo[], overrides: LayoutOverrides = {}): DecoderLayout {
  const fail = (what: string): never => {
    throw TesseraError.invalidArg(`model '${model}' does not have the decoder layout the onnxruntime_llm backend runs: ${what}`);
  };
  const byName = new Map(inputs.map((i) => [i.name, i]));
  for (const name of ['input_ids', 'attention_mask', 'position_ids']) {
    const input = byName.get(name);
    if (input === undefined) fail(`input '${name}' is missing (inputs: ${inputs.map((i) => i.name).join(', ')})`);
    else if (input.type !== 'int64') fail(`input '${name}' must be int64, is ${input.type}`);
  }
  const layerSet = new Set<number>();
  for (const input of inputs) {
    const match = PAST.exec(input.name);
    if (match !== null) layerSet.add(Number(match[1]));
    else if (!['input_ids', 'attention_mask', 'position_ids'].includes(input.name)) fail(`unexpected input '${input.name}'`);
  }
  const layers = layerSet.size;
  if (layers === 0) fail("no 'past_key_values.{i}.key' / 'past_key_values.{i}.value' inputs");
  const outputNames = new Set(outputs.map((o) => o.name));
  if (!outputNames.has('logits')) fail(`output 'logits' is missing (outputs: ${[...outputNames].join(', ')})`);
  const first = byName.get('past_key_values.0.key');
  if (first === undefined) fail("input 'past_key_values.0.key' is missing");
  const shape = (first as ValueInfo).shape;
  if (shape.length !== 4) fail(`'past_key_values.0.key' must be 4-D [batch, heads, past, head_dim], has shape [${shape.join(', ')}]`);
  const heads = typeof shape[1] === 'number' ? shape[1] : overrides.heads;
  const headDim = typeof shape[3] === 'number' ? shape[3] : overrides.headDim;
  if (heads === undefined || headDim === undefined || heads < 1 || headDim < 1) {
    fail("the KV inputs leave heads or head_dim symbolic; set the config parameters 'num_heads' and 'head_dim'");
  }
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value']) {
      const name = `past_key_values.${i}.${kind}`;
      const input = byName.get(name);
      if (input === undefined) fail(`input '${name}' is missing (layers must be numbered 0..${layers - 1})`);
      else {
        if (input.type !== 'float32') fail(`input '${name}' must be float32, is ${input.type}`);
        const [, h, , d] = input.shape;
        if ((typeof h === 'number' && h !== heads) || (typeof d === 'number' && d !== headDim)) {
          fail(`input '${name}' has shape [${input.shape.join(', ')}], other layers have ${heads} heads of ${headDim}`);
        }
      }
      if (!outputNames.has(`present.${i}.${kind}`)) fail(`output 'present.${i}.${kind}' is missing`);
    }
  }
  return { layers, heads: heads as number, headDim: headDim as number };
}
