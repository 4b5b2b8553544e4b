// Where a shared-buffer GQA decode run's time goes: onnxruntime's own profile (model_run, and each node kind's
// kernel time) against the wall time the JS caller sees; the rest is the binding (feeds in, outputs copied out).
// 32 rows at 448 cached positions: tiny_decoder (common, logits only), GQA twin unshared (logits only), GQA twin
// shared (capacity 512, presents fetched over the cache).
// Run: taskset -c 0 node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-profile.mjs
import { readFileSync, readdirSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { buildTinyDecoderOnnx } from '../../../gpu-node/src/example-models/tiny-decoder-onnx.ts';
import { TINY_DECODER_SPEC, TINY_DECODER_SEED } from '../../../gpu-node/src/example-models/tiny-decoder.ts';
import { buildGqaDecoderOnnx } from './gqa-decoder.mjs';

const spec = TINY_DECODER_SPEC, D = spec.hidden / spec.heads, KV = spec.kvHeads ?? spec.heads;
const names = Array.from({ length: spec.layers }, (_, l) => [`${l}.key`, `${l}.value`]).flat();
const ROWS = 32, PAST = 448, CAP = 512, N = 20;
const dir = mkdtempSync(join(tmpdir(), 'gqa21-prof-'));
const i64 = (rows, width, f) => new ort.Tensor('int64', BigInt64Array.from({ length: rows * width }, (_, i) => BigInt(f(i))), [rows, width]);
async function profile(label, bytes, shared) {
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: join(dir, label) });
  const feeds = { input_ids: i64(ROWS, 1, () => 65), position_ids: i64(ROWS, 1, () => PAST), attention_mask: i64(ROWS, PAST + 1, () => 1) };
  let fetches = ['logits'];
  if (shared) {
    fetches = { logits: null };
    for (const n of names) { const t = new ort.Tensor('float32', new Float32Array(ROWS * KV * CAP * D).fill(0.01), [ROWS, KV, CAP, D]); feeds[`past_key_values.${n}`] = t; fetches[`present.${n}`] = t; }
  } else {
    const cache = new Float32Array(ROWS * KV * PAST * D).fill(0.01);
    for (const n of names) feeds[`past_key_values.${n}`] = new ort.Tensor('float32', cache, [ROWS, KV, PAST, D]);
  }
  await session.run(feeds, fetches);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await session.run(feeds, fetches);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1000 / N;
  session.endProfiling();
  await session.release();
  const file = join(dir, readdirSync(dir).find((f) => f.startsWith(label + '_')));
  const events = JSON.parse(readFileSync(file, 'utf8'));
  const runs = events.filter((e) => e.name === 'model_run').slice(1);
  const byOp = {};
  for (const e of events) if (e.cat === 'Node' && e.name.endsWith('_kernel_time')) { const op = e.args?.op_name ?? '?'; byOp[op] = (byOp[op] ?? 0) + e.dur; }
  const runUs = runs.reduce((s, e) => s + e.dur, 0) / runs.length;
  const perRunOps = Object.fromEntries(Object.entries(byOp).map(([k, v]) => [k, Math.round(v / (N + 1))]).sort((a, b) => b[1] - a[1]));
  console.log(`${label}: JS wall ${wallUs.toFixed(0)} µs/run; onnxruntime model_run ${runUs.toFixed(0)} µs; outside onnxruntime ${(wallUs - runUs).toFixed(0)} µs; kernel µs/run by op ${JSON.stringify(perRunOps)}`);
}
await profile('common', buildTinyDecoderOnnx(spec, TINY_DECODER_SEED), false);
await profile('gqa_sep', buildGqaDecoderOnnx(spec, TINY_DECODER_SEED), false);
await profile('gqa_shared512', buildGqaDecoderOnnx(spec, TINY_DECODER_SEED), true);
rmSync(dir, { recursive: true });
