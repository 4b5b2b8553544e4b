// Question 3: CPU per decode run, tiny_decoder (common layout: Concat of past and new) against its GQA twin,
// bare onnxruntime-node, one intra-op thread, rows 16/32 × cached 8..448, layouts in turns (round-robin per
// point, ROUNDS rounds, best round of RUNS runs each). Variants:
//   common      tiny_decoder, past [rows,1,L,32], logits fetched only (as static21's `runs` mode; the engine
//               fetches one last position more, a few hundred bytes)
//   gqa_sep     GQA twin, past [rows,1,L,32], present left to onnxruntime (not shared), logits fetched only
//   gqa_bucket  GQA twin, one cache buffer per layer side of capacity = smallest of 64/128/256/512 > L,
//               present fetched over it (shared: the op writes one position; the binding copies it out)
//   gqa_512     same with capacity 512 (the whole context)
//   common_full tiny_decoder with every present fetched too (onnxruntime allocates them; the binding copies
//               each out): common_full - common is the binding's copy-out of rows × (L+1) positions
// VARIANTS=a,b,... picks some (default: all five).
// Fit per variant: cpuUs = perRun + perRow × rows + perRowPosition × rows × L.
// Run: taskset -c 0 node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-runs.mjs > gqa-runs.json
import ort from 'onnxruntime-node';
import { buildTinyDecoderOnnx } from '../../../gpu-node/src/example-models/tiny-decoder-onnx.ts';
import { TINY_DECODER_SPEC, TINY_DECODER_SEED } from '../../../gpu-node/src/example-models/tiny-decoder.ts';
import { buildGqaDecoderOnnx } from './gqa-decoder.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 3), RUNS = Number(process.env.RUNS ?? 5);
const spec = TINY_DECODER_SPEC, LAYERS = spec.layers, D = spec.hidden / spec.heads, KV = spec.kvHeads ?? spec.heads;
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const common = await ort.InferenceSession.create(buildTinyDecoderOnnx(spec, TINY_DECODER_SEED), opts);
const gqa = await ort.InferenceSession.create(buildGqaDecoderOnnx(spec, TINY_DECODER_SEED), opts);
const names = Array.from({ length: LAYERS }, (_, l) => [`${l}.key`, `${l}.value`]).flat();
const i64 = (rows, width, f) => new ort.Tensor('int64', BigInt64Array.from({ length: rows * width }, (_, i) => BigInt(f(i))), [rows, width]);
const bucketOf = (n) => [64, 128, 256, 512].find((c) => c >= n);

function setup(variant, rows, past) {
  const base = { input_ids: i64(rows, 1, () => 65), position_ids: i64(rows, 1, () => past), attention_mask: i64(rows, past + 1, () => 1) };
  if (variant === 'common' || variant === 'gqa_sep' || variant === 'common_full') {
    const cache = new Float32Array(rows * KV * past * D).fill(0.01);
    for (const n of names) base[`past_key_values.${n}`] = new ort.Tensor('float32', cache, [rows, KV, past, D]);
    const fetches = variant === 'common_full' ? ['logits', ...names.map((n) => `present.${n}`)] : ['logits'];
    return { session: variant === 'gqa_sep' ? gqa : common, feeds: base, fetches };
  }
  const cap = variant === 'gqa_512' ? 512 : bucketOf(past + 1);
  const fetches = { logits: null };
  for (const n of names) {
    const t = new ort.Tensor('float32', new Float32Array(rows * KV * cap * D).fill(0.01), [rows, KV, cap, D]);
    base[`past_key_values.${n}`] = t;
    fetches[`present.${n}`] = t;
  }
  return { session: gqa, feeds: base, fetches, cap };
}

const variants = (process.env.VARIANTS ?? 'common,gqa_sep,gqa_bucket,gqa_512,common_full').split(',');
const points = [];
for (const rows of [16, 32]) for (const past of [8, 64, 128, 256, 448]) for (const variant of variants) points.push({ variant, rows, past, ...setup(variant, rows, past), best: Infinity });
for (const p of points) await p.session.run(p.feeds, p.fetches);
for (let round = 0; round < ROUNDS; round++) {
  for (const p of points) {
    const before = process.cpuUsage();
    for (let i = 0; i < RUNS; i++) await p.session.run(p.feeds, p.fetches);
    const used = process.cpuUsage(before);
    p.best = Math.min(p.best, (used.user + used.system) / RUNS);
  }
}

function fitPlane(xs, ys) {
  const m = [0, 1, 2].map((i) => [...[0, 1, 2].map((j) => xs.reduce((s, x) => s + x[i] * x[j], 0)), xs.reduce((s, x, k) => s + x[i] * ys[k], 0)]);
  for (let i = 0; i < 3; i++) for (let k = i + 1; k < 3; k++) { const f = m[k][i] / m[i][i]; for (let j = i; j < 4; j++) m[k][j] -= f * m[i][j]; }
  const c = [0, 0, 0];
  for (let i = 2; i >= 0; i--) { let s = m[i][3]; for (let j = i + 1; j < 3; j++) s -= m[i][j] * c[j]; c[i] = s / m[i][i]; }
  return { perRunUs: c[0], perRowUs: c[1], perRowPositionUs: c[2] };
}
const out = { rounds: ROUNDS, runs: RUNS, fits: {}, points: points.map(({ variant, rows, past, cap, best }) => ({ variant, rows, past, cap, cpuUs: Math.round(best) })) };
for (const v of variants) {
  const ps = out.points.filter((p) => p.variant === v);
  out.fits[v] = fitPlane(ps.map((p) => [1, p.rows, p.rows * p.past]), ps.map((p) => p.cpuUs));
}
console.log(JSON.stringify(out, null, 1));
for (const v of variants) {
  const f = out.fits[v];
  console.error(`${v.padEnd(10)} perRun ${f.perRunUs.toFixed(0)} µs, perRow ${f.perRowUs.toFixed(1)} µs, perRowPosition ${f.perRowPositionUs.toFixed(3)} µs | ` + out.points.filter((p) => p.variant === v).map((p) => `${p.rows}x${p.past}:${p.cpuUs}`).join(' '));
}
