// Exactness of the GQA twin against tiny_decoder (common layout): a prompt prefilled, then greedy decode,
// each model with its own cache (common: presents fed back as pasts; GQA: one shared capacity buffer per layer
// side, present fetched over the past). Reports the largest logit difference and whether the tokens agree.
// Run: node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-exact.mjs
import ort from 'onnxruntime-node';
import { buildTinyDecoderOnnx } from '../../../gpu-node/src/example-models/tiny-decoder-onnx.ts';
import { TINY_DECODER_SPEC, TINY_DECODER_SEED } from '../../../gpu-node/src/example-models/tiny-decoder.ts';
import { buildGqaDecoderOnnx } from './gqa-decoder.mjs';

const spec = TINY_DECODER_SPEC, L = spec.layers, D = spec.hidden / spec.heads, KV = spec.kvHeads ?? spec.heads;
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const common = await ort.InferenceSession.create(buildTinyDecoderOnnx(spec, TINY_DECODER_SEED), opts);
const gqa = await ort.InferenceSession.create(buildGqaDecoderOnnx(spec, TINY_DECODER_SEED), opts);
const i64 = (vals, dims) => new ort.Tensor('int64', BigInt64Array.from(vals.map(BigInt)), dims);
const argmax = (a, off, n) => { let best = 0; for (let i = 1; i < n; i++) if (a[off + i] > a[off + best]) best = i; return best; };
const prompt = [...new TextEncoder().encode('the quick brown fox jumps over')];
const STEPS = 64, CAP = 128;
let ids = prompt.slice(), maxDiff = 0, agree = 0;
// common layout
let feeds = { input_ids: i64(prompt, [1, prompt.length]), attention_mask: i64(prompt.map(() => 1), [1, prompt.length]), position_ids: i64(prompt.map((_, i) => i), [1, prompt.length]) };
for (let l = 0; l < L; l++) for (const s of ['key', 'value']) feeds[`past_key_values.${l}.${s}`] = new ort.Tensor('float32', new Float32Array(0), [1, KV, 0, D]);
// GQA layout: one cache buffer per layer side, capacity CAP
const caches = {};
for (let l = 0; l < L; l++) for (const s of ['key', 'value']) caches[`${l}.${s}`] = new ort.Tensor('float32', new Float32Array(KV * CAP * D), [1, KV, CAP, D]);
const gqaFeeds = (tokens, start) => {
  const f = { input_ids: i64(tokens, [1, tokens.length]), attention_mask: i64(Array(start + tokens.length).fill(1), [1, start + tokens.length]), position_ids: i64(tokens.map((_, i) => start + i), [1, tokens.length]) };
  for (const key of Object.keys(caches)) f[`past_key_values.${key}`] = caches[key];
  return f;
};
const gqaFetches = { logits: null };
for (const key of Object.keys(caches)) gqaFetches[`present.${key}`] = caches[key];
let gqaNext = gqaFeeds(prompt, 0);
for (let step = 0; step < STEPS; step++) {
  const a = await common.run(feeds);
  const b = await gqa.run(gqaNext, gqaFetches);
  const V = spec.vocab, n = a.logits.dims[1];
  const offA = (n - 1) * V, offB = (b.logits.dims[1] - 1) * V;
  for (let i = 0; i < V; i++) maxDiff = Math.max(maxDiff, Math.abs(a.logits.data[offA + i] - b.logits.data[offB + i]));
  const tA = argmax(a.logits.data, offA, V), tB = argmax(b.logits.data, offB, V);
  if (tA === tB) agree++;
  const pos = ids.length;
  ids.push(tA);
  feeds = { input_ids: i64([tA], [1, 1]), attention_mask: i64(Array(pos + 1).fill(1), [1, pos + 1]), position_ids: i64([pos], [1, 1]) };
  for (let l = 0; l < L; l++) for (const s of ['key', 'value']) feeds[`past_key_values.${l}.${s}`] = a[`present.${l}.${s}`];
  gqaNext = gqaFeeds([tA], pos);
}
console.log(`exactness: prompt ${prompt.length} tokens + ${STEPS} greedy steps; tokens agree ${agree}/${STEPS}; largest |logit diff| ${maxDiff.toExponential(2)}`);
console.log('text:', JSON.stringify(new TextDecoder().decode(Uint8Array.from(ids.slice(prompt.length).filter((t) => t < 256)))));
