// CPU per request for a remembered binary header's decode plus the batcher's key over its shape ([1, 1024] FP32).
import { decodeInferRequestBody } from '../../../shared/src/kserve/index.js';
import { batchSignature } from '../../../gpu-node/src/scheduler/dynamic/batcher-request.js';

const json = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1024], datatype: 'FP32', parameters: { binary_data_size: 4096 } }], outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }] }));
const body = new Uint8Array(json.length + 4096);
body.set(json);
const options = { body, headerLength: String(json.length), modelName: 'mlp_large' };
const ragged = new Set<string>();
const N = 500_000;
let sink = 0;
for (let round = 0; round < 4; round++) {
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const { request } = decodeInferRequestBody(options);
    sink += batchSignature(request.inputs, ragged, true).length;
  }
  const u = process.cpuUsage(t);
  console.log(`round ${round}: ${((1000 * (u.user + u.system)) / N).toFixed(0)} ns per decode + key`);
}
if (sink === 0) console.log('');
