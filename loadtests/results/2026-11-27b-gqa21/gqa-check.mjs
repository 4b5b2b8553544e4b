// Questions 1 and 2 (issue 21, gqa21): does onnxruntime-node 1.30 (CPU EP) run a one-node
// com.microsoft.GroupQueryAttention graph written by the project's ONNX writer, and can past and present
// share one pre-allocated buffer (passed as a fetch over the past input's memory)?
// Run: cd /work/wt-gqa21 && node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-check.mjs
import ort from 'onnxruntime-node';
import { encodeModel, OnnxDataType } from '../../../gpu-node/src/example-models/onnx-writer.ts';
import { withMicrosoftOpset, seededFloats } from './gqa-model.mjs';

const HEADS = 4, KV = 1, D = 32, HID = HEADS * D;

function gqaModel() {
  return withMicrosoftOpset(encodeModel({
    graph: {
      name: 'gqa_one',
      nodes: [{ opType: 'GroupQueryAttention', domain: 'com.microsoft', name: 'gqa',
        inputs: ['query', 'key', 'value', 'past_key', 'past_value', 'seqlens_k', 'total_sequence_length'],
        outputs: ['output', 'present_key', 'present_value'],
        attributes: [{ name: 'num_heads', type: 'int', value: HEADS }, { name: 'kv_num_heads', type: 'int', value: KV }] }],
      inputs: [
        { name: 'query', elemType: OnnxDataType.FLOAT, shape: ['b', 's', HID] },
        { name: 'key', elemType: OnnxDataType.FLOAT, shape: ['b', 's', KV * D] },
        { name: 'value', elemType: OnnxDataType.FLOAT, shape: ['b', 's', KV * D] },
        { name: 'past_key', elemType: OnnxDataType.FLOAT, shape: ['b', KV, 'p', D] },
        { name: 'past_value', elemType: OnnxDataType.FLOAT, shape: ['b', KV, 'p', D] },
        { name: 'seqlens_k', elemType: OnnxDataType.INT32, shape: ['b'] },
        { name: 'total_sequence_length', elemType: OnnxDataType.INT32, shape: [] },
      ],
      outputs: [
        { name: 'output', elemType: OnnxDataType.FLOAT, shape: ['b', 's', HID] },
        { name: 'present_key', elemType: OnnxDataType.FLOAT, shape: ['b', KV, 't', D] },
        { name: 'present_value', elemType: OnnxDataType.FLOAT, shape: ['b', KV, 't', D] },
      ],
    },
  }));
}

// Plain attention in JS: row b's query token i (of s new) sees cached positions [0, past[b]) and new 0..i.
function reference(q, k, v, pastK, pastV, cap, past, b, s) {
  const out = new Float64Array(b * s * HID);
  for (let r = 0; r < b; r++) for (let h = 0; h < HEADS; h++) {
    const kvh = Math.floor(h / (HEADS / KV));
    const keyAt = (j) => j < past[r] ? pastK.subarray(((r * KV + kvh) * cap + j) * D, ((r * KV + kvh) * cap + j + 1) * D)
      : k.subarray(((r * s + (j - past[r])) * KV + kvh) * D, ((r * s + (j - past[r])) * KV + kvh + 1) * D);
    const valAt = (j) => j < past[r] ? pastV.subarray(((r * KV + kvh) * cap + j) * D, ((r * KV + kvh) * cap + j + 1) * D)
      : v.subarray(((r * s + (j - past[r])) * KV + kvh) * D, ((r * s + (j - past[r])) * KV + kvh + 1) * D);
    for (let i = 0; i < s; i++) {
      const qv = q.subarray(((r * s + i) * HEADS + h) * D, ((r * s + i) * HEADS + h + 1) * D);
      const n = past[r] + i + 1;
      const scores = new Float64Array(n);
      let max = -Infinity;
      for (let j = 0; j < n; j++) { const kj = keyAt(j); let dot = 0; for (let d = 0; d < D; d++) dot += qv[d] * kj[d]; scores[j] = dot / Math.sqrt(D); max = Math.max(max, scores[j]); }
      let sum = 0; for (let j = 0; j < n; j++) { scores[j] = Math.exp(scores[j] - max); sum += scores[j]; }
      for (let j = 0; j < n; j++) { const vj = valAt(j); for (let d = 0; d < D; d++) out[((r * s + i) * HEADS + h) * D + d] += scores[j] / sum * vj[d]; }
    }
  }
  return out;
}

const maxDiff = (a, b) => { let m = 0; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i])); return m; };

const session = await ort.InferenceSession.create(gqaModel(), { intraOpNumThreads: 1, interOpNumThreads: 1 });
console.log('Q1 session created; inputs', session.inputNames.join(','), 'outputs', session.outputNames.join(','));

// Case A: separate past ([b, kv, past, d], same past length for all rows) and present (ORT allocates).
{
  const b = 3, s = 1, past = 5, cap = past;
  const q = seededFloats(b * s * HID, 1), k = seededFloats(b * s * KV * D, 2), v = seededFloats(b * s * KV * D, 3);
  const pk = seededFloats(b * KV * cap * D, 4), pv = seededFloats(b * KV * cap * D, 5);
  const r = await session.run({
    query: new ort.Tensor('float32', q, [b, s, HID]), key: new ort.Tensor('float32', k, [b, s, KV * D]),
    value: new ort.Tensor('float32', v, [b, s, KV * D]),
    past_key: new ort.Tensor('float32', pk, [b, KV, cap, D]), past_value: new ort.Tensor('float32', pv, [b, KV, cap, D]),
    seqlens_k: new ort.Tensor('int32', Int32Array.from({ length: b }, () => past + s - 1), [b]),
    total_sequence_length: new ort.Tensor('int32', Int32Array.of(past + s), []),
  });
  const ref = reference(q, k, v, pk, pv, cap, [past, past, past], b, s);
  console.log(`Q1 separate buffers, decode b=${b} past=${past}: output max |diff| vs JS = ${maxDiff(r.output.data, ref).toExponential(2)}; present dims ${r.present_key.dims}`);
}

// Case B: one capacity buffer per layer side, rows at different lengths, present fetched over the same memory.
async function sharedStep(b, s, cap, past, seed) {
  const q = seededFloats(b * s * HID, seed), k = seededFloats(b * s * KV * D, seed + 1), v = seededFloats(b * s * KV * D, seed + 2);
  const cacheK = seededFloats(b * KV * cap * D, seed + 3), cacheV = seededFloats(b * KV * cap * D, seed + 4);
  const beforeK = cacheK.slice(), beforeV = cacheV.slice();
  const keyT = new ort.Tensor('float32', cacheK, [b, KV, cap, D]), valT = new ort.Tensor('float32', cacheV, [b, KV, cap, D]);
  const seqlens = Int32Array.from(past, (p) => p + s - 1);
  const r = await session.run({
    query: new ort.Tensor('float32', q, [b, s, HID]), key: new ort.Tensor('float32', k, [b, s, KV * D]),
    value: new ort.Tensor('float32', v, [b, s, KV * D]), past_key: keyT, past_value: valT,
    seqlens_k: new ort.Tensor('int32', seqlens, [b]),
    total_sequence_length: new ort.Tensor('int32', Int32Array.of(Math.max(...past) + s), []),
  }, { output: null, present_key: keyT, present_value: valT });
  const ref = reference(q, k, v, beforeK, beforeV, cap, past, b, s);
  // Every cache element but the new positions must be untouched; the new ones must hold k/v.
  let changedElsewhere = 0, wrongNew = 0;
  for (let row = 0; row < b; row++) for (let j = 0; j < cap; j++) for (let d = 0; d < D; d++) {
    const at = (row * cap + j) * D + d;
    const isNew = j >= past[row] && j < past[row] + s;
    if (isNew) { const src = (row * s + (j - past[row])) * D + d; if (cacheK[at] !== k[src] || cacheV[at] !== v[src]) wrongNew++; }
    else if (cacheK[at] !== beforeK[at] || cacheV[at] !== beforeV[at]) changedElsewhere++;
  }
  const sameMemory = r.present_key.data.buffer === cacheK.buffer;
  return { diff: maxDiff(r.output.data, ref), changedElsewhere, wrongNew, sameMemory, dims: r.present_key.dims };
}
const shared = await sharedStep(4, 1, 16, [3, 9, 0, 15], 11);
console.log(`Q2 shared buffer, decode b=4 cap=16 past=[3,9,0,15]: output max |diff| = ${shared.diff.toExponential(2)}; new positions wrong ${shared.wrongNew}; other cache elements changed ${shared.changedElsewhere}; returned present over the fetch's memory ${shared.sameMemory}; dims ${shared.dims}`);
const sharedPrefill = await sharedStep(2, 4, 16, [0, 0], 21);
console.log(`Q2 shared buffer, prefill b=2 s=4 cap=16 past=[0,0]: output max |diff| = ${sharedPrefill.diff.toExponential(2)}; new wrong ${sharedPrefill.wrongNew}; other changed ${sharedPrefill.changedElsewhere}`);
let sharedChunk;
try { sharedChunk = await sharedStep(2, 3, 16, [5, 5], 31); } catch (e) { sharedChunk = { diff: NaN, wrongNew: String(e.message).split("\n")[0], changedElsewhere: "-" }; }
console.log(`Q2 shared buffer, chunk b=2 s=3 cap=16 past=[5,5]: output max |diff| = ${sharedChunk.diff.toExponential(2)}; new wrong ${sharedChunk.wrongNew}; other changed ${sharedChunk.changedElsewhere}`);

// Is the returned present the fetched tensor's memory or a copy? Write into it and look at the cache.
{
  const b = 1, s = 1, cap = 8;
  const cacheK = seededFloats(b * KV * cap * D, 41), cacheV = seededFloats(b * KV * cap * D, 42);
  const keyT = new ort.Tensor('float32', cacheK, [b, KV, cap, D]), valT = new ort.Tensor('float32', cacheV, [b, KV, cap, D]);
  const r = await session.run({
    query: new ort.Tensor('float32', seededFloats(HID, 43), [b, s, HID]), key: new ort.Tensor('float32', seededFloats(D, 44), [b, s, D]),
    value: new ort.Tensor('float32', seededFloats(D, 45), [b, s, D]), past_key: keyT, past_value: valT,
    seqlens_k: new ort.Tensor('int32', Int32Array.of(2), [b]), total_sequence_length: new ort.Tensor('int32', Int32Array.of(3), []),
  }, { output: null, present_key: keyT, present_value: valT });
  const before = cacheK[0];
  r.present_key.data[0] = 12345;
  console.log(`Q2 returned present: same Tensor object ${r.present_key === keyT}; same ArrayBuffer ${r.present_key.data.buffer === cacheK.buffer}; writing it changes the cache ${cacheK[0] !== before} (a copy when false)`);
}
{
  const one = await sharedStep(1, 3, 16, [5], 51);
  console.log(`Q2 shared buffer, chunk b=1 s=3 cap=16 past=[5]: output max |diff| = ${one.diff.toExponential(2)}; new wrong ${one.wrongNew}; other changed ${one.changedElsewhere}`);
}
