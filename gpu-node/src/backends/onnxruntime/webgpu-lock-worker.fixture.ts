// A worker thread for webgpu-lock.test.ts: enters the lock `rounds` times, counting how many threads are
// inside at once in shared memory, and throws from inside every fifth time (the lock must still be released).
import { parentPort, workerData } from 'node:worker_threads';
import { withWebGpuLock } from './webgpu-lock.js';

const { lock, counters, rounds } = workerData as { lock: SharedArrayBuffer; counters: SharedArrayBuffer; rounds: number };
const count = new Int32Array(counters); // [inside now, most inside at once, entries]
for (let round = 0; round < rounds; round++) {
  await withWebGpuLock(lock, async () => {
    const inside = Atomics.add(count, 0, 1) + 1;
    Atomics.store(count, 1, Math.max(Atomics.load(count, 1), inside));
    Atomics.add(count, 2, 1);
    await new Promise((resolve) => setTimeout(resolve, 1));
    Atomics.sub(count, 0, 1);
    if (round % 5 === 4) throw new Error('planted');
  }).catch(() => undefined);
}
parentPort?.postMessage('done');
