/**
 * The cost of one main-thread -> worker -> main-thread hand-off shaped like an onnxruntime execute and
 * its reply (two small tensors out, one back), as the node makes per execution: the CPU of both threads and
 * wall time per round trip, with the tensors transferred or cloned. Run it pinned to one core, as the
 * per-core bench pins the node: taskset -c 0 node --import tsx loadtests/src/lib/profile/worker-round-trip.ts
 */
import { Worker } from 'node:worker_threads';

const ROUND_TRIPS = 20_000;
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  const out = new Uint8Array(m.bytes);
  const reply = { type: 'reply', id: m.id, body: { runs: [{ outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: out.buffer }] }], inputNs: 1, inferNs: 2, outputNs: 3 } };
  if (m.transfer) parentPort.postMessage(reply, [out.buffer]); else parentPort.postMessage(reply);
});`;

async function measure(transfer: boolean, bytes: number): Promise<{ cpuUs: number; wallUs: number }> {
  const worker = new Worker(ECHO, { eval: true });
  let done = 0;
  const start = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const send = (): void => {
      const inputs = [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: 'INT32', shape: [1, 16], data: new Uint8Array(bytes).buffer }));
      const message = { type: 'execute', id: done, bytes, transfer, body: { runs: [{ inputs, outputNames: ['OUTPUT0', 'OUTPUT1'] }] } };
      if (transfer) worker.postMessage(message, inputs.map((t) => t.data));
      else worker.postMessage(message);
    };
    worker.on('message', () => {
      if (++done === ROUND_TRIPS) resolve();
      else send();
    });
    send();
  });
  const cpu = process.cpuUsage(start);
  const wallUs = ((performance.now() - t0) * 1000) / ROUND_TRIPS;
  await worker.terminate();
  return { cpuUs: (cpu.user + cpu.system) / ROUND_TRIPS, wallUs };
}

for (const bytes of [64, 262_144]) {
  for (const transfer of [true, false]) {
    const { cpuUs, wallUs } = await measure(transfer, bytes);
    process.stdout.write(`${bytes} B per tensor, ${transfer ? 'transferred' : 'cloned'}: CPU of both threads ${cpuUs.toFixed(1)} us, wall ${wallUs.toFixed(1)} us per round trip\n`);
  }
}
