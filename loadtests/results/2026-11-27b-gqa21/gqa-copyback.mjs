// Does the node binding copy a pre-allocated (fetched) output back into a new JS buffer after the run?
// Shared-buffer GQA decode at a fixed cached length (64) and rows (16), with the capacity growing: if the
// returned present is a copy, the run's time grows with capacity although the op only touches 64 positions.
// Run: taskset -c 0 node --import tsx loadtests/results/2026-11-27b-gqa21/gqa-copyback.mjs
import ort from 'onnxruntime-node';
import { encodeModel, OnnxDataType } from '../../../gpu-node/src/example-models/onnx-writer.ts';
import { withMicrosoftOpset, seededFloats } from './gqa-model.mjs';

const HEADS = 4, KV = 1, D = 32, HID = HEADS * D, ROWS = 16, PAST = 64;
const model = withMicrosoftOpset(encodeModel({ graph: { name: 'g',
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
  ] } }));
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const q = new ort.Tensor('float32', seededFloats(ROWS * HID, 1), [ROWS, 1, HID]);
const k = new ort.Tensor('float32', seededFloats(ROWS * KV * D, 2), [ROWS, 1, KV * D]);
const v = new ort.Tensor('float32', seededFloats(ROWS * KV * D, 3), [ROWS, 1, KV * D]);
const seqlens = new ort.Tensor('int32', new Int32Array(ROWS).fill(PAST), [ROWS]);
const total = new ort.Tensor('int32', Int32Array.of(PAST + 1), []);
const caps = [128, 512, 2048, 8192];
const caches = new Map(caps.map((cap) => [cap, {
  k: new ort.Tensor('float32', seededFloats(ROWS * KV * cap * D, 4), [ROWS, KV, cap, D]),
  v: new ort.Tensor('float32', seededFloats(ROWS * KV * cap * D, 5), [ROWS, KV, cap, D]) }]));
const timeRun = async (cap, fetchPresent) => {
  const c = caches.get(cap);
  const feeds = { query: q, key: k, value: v, past_key: c.k, past_value: c.v, seqlens_k: seqlens, total_sequence_length: total };
  const fetches = fetchPresent ? { output: null, present_key: c.k, present_value: c.v } : { output: null, present_key: null, present_value: null };
  const n = 200;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await session.run(feeds, fetches);
  return Number(process.hrtime.bigint() - t0) / n / 1000;
};
for (const cap of caps) { await timeRun(cap, true); await timeRun(cap, false); }
const rows = [];
for (let round = 0; round < 5; round++) for (const cap of caps) for (const shared of [true, false]) rows.push({ round, cap, shared, us: await timeRun(cap, shared) });
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const cap of caps) for (const shared of [true, false]) {
  console.log(`cap ${cap} ${shared ? 'shared (present fetched over past)' : 'separate (ORT allocates present)'}: median µs/run ${median(rows.filter((r) => r.cap === cap && r.shared === shared).map((r) => r.us)).toFixed(1)}  (cache bytes per side ${ROWS * KV * cap * D * 4})`);
}
console.log(JSON.stringify(rows));
