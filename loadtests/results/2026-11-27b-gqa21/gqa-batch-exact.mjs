// GQA twin, rows at different lengths decoded together vs each alone: three prompts of different lengths, each
// prefilled alone into its row of one shared cache (capacity 128), then greedy decode steps over all three rows
// in one run (right-padded mask); the same prompts decoded alone (batch 1). Tokens and largest logit difference.
// Run: node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-batch-exact.mjs
import ort from 'onnxruntime-node';
import { TINY_DECODER_SPEC, TINY_DECODER_SEED } from '../../../gpu-node/src/example-models/tiny-decoder.ts';
import { buildGqaDecoderOnnx } from './gqa-decoder.mjs';

const spec = TINY_DECODER_SPEC, D = spec.hidden / spec.heads, KV = spec.kvHeads ?? spec.heads, V = spec.vocab;
const names = Array.from({ length: spec.layers }, (_, l) => [`${l}.key`, `${l}.value`]).flat();
const session = await ort.InferenceSession.create(buildGqaDecoderOnnx(spec, TINY_DECODER_SEED), { intraOpNumThreads: 1, interOpNumThreads: 1 });
const CAP = 128, STEPS = 40;
const prompts = ['hi', 'the quick brown fox jumps', 'a longer prompt, so the rows differ in length by a lot'].map((t) => [...new TextEncoder().encode(t)]);
const i64 = (vals, dims) => new ort.Tensor('int64', BigInt64Array.from(vals.map(BigInt)), dims);
const argmax = (a, off) => { let b = 0; for (let i = 1; i < V; i++) if (a[off + i] > a[off + b]) b = i; return b; };
const newCache = (rows) => Object.fromEntries(names.map((n) => [n, new Float32Array(rows * KV * CAP * D)]));
async function run(cache, rows, ids, lengths, tokensPerRow) {
  const feeds = { input_ids: i64(ids, [rows, tokensPerRow]), position_ids: i64(lengths.flatMap((len) => Array.from({ length: tokensPerRow }, (_, i) => len + i)), [rows, tokensPerRow]) };
  const width = Math.max(...lengths) + tokensPerRow;
  feeds.attention_mask = i64(lengths.flatMap((len) => Array.from({ length: width }, (_, j) => (j < len + tokensPerRow ? 1 : 0))), [rows, width]);
  const fetches = { logits: null };
  for (const n of names) { const t = new ort.Tensor('float32', cache[n], [rows, KV, CAP, D]); feeds[`past_key_values.${n}`] = t; fetches[`present.${n}`] = t; }
  return (await session.run(feeds, fetches)).logits;
}
// alone
const alone = [];
for (const p of prompts) {
  const cache = newCache(1), out = { tokens: [], logits: [] };
  let logits = await run(cache, 1, p, [0], p.length), len = p.length;
  for (let s = 0; s < STEPS; s++) {
    const off = (logits.dims[1] - 1) * V, t = argmax(logits.data, off);
    out.tokens.push(t); out.logits.push(logits.data.slice(off, off + V));
    logits = await run(cache, 1, [t], [len], 1); len++;
  }
  alone.push(out);
}
// together: prefill each alone into its row (a one-row view of the shared cache), then batched decode
const cache = newCache(3), rowView = (r) => Object.fromEntries(names.map((n) => [n, cache[n].subarray(r * KV * CAP * D, (r + 1) * KV * CAP * D)]));
const lens = prompts.map((p) => p.length), next = [];
const firstLogits = [];
for (let r = 0; r < 3; r++) { const l = await run(rowView(r), 1, prompts[r], [0], prompts[r].length); const off = (l.dims[1] - 1) * V; firstLogits.push(l.data.slice(off, off + V)); next.push(argmax(l.data, off)); }
let agree = 0, total = 0, maxDiff = 0;
const diff = (a, b) => { for (let i = 0; i < V; i++) maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i])); };
for (let r = 0; r < 3; r++) { diff(firstLogits[r], alone[r].logits[0]); total++; if (next[r] === alone[r].tokens[0]) agree++; }
for (let s = 1; s < STEPS; s++) {
  const logits = await run(cache, 3, next, lens, 1);
  for (let r = 0; r < 3; r++) {
    lens[r]++;
    const row = logits.data.slice(r * V, (r + 1) * V);
    diff(row, alone[r].logits[s]); total++;
    next[r] = argmax(logits.data, r * V);
    if (next[r] === alone[r].tokens[s]) agree++;
  }
}
console.log(`batched rows at lengths ${prompts.map((p) => p.length).join('/')} vs alone, ${STEPS} greedy steps each: tokens agree ${agree}/${total}; largest |logit diff| ${maxDiff.toExponential(2)}`);
