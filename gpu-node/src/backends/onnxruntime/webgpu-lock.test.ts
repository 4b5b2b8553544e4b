import { describe, expect, it } from 'vitest';
import { startModuleWorker } from '../../../../shared/src/workers/index.js';
import { webGpuLockBuffer } from './webgpu-lock.js';

const FIXTURE = new URL('./webgpu-lock-worker.fixture.ts', import.meta.url);

describe('the process-wide WebGPU lock', () => {
  it('lets one worker thread at a time in, and is released when the work throws', async () => {
    const lock = webGpuLockBuffer();
    expect(webGpuLockBuffer()).toBe(lock);
    const counters = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
    const rounds = 20;
    const workers = [0, 1, 2].map(() => startModuleWorker(FIXTURE, { lock, counters, rounds }));
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            worker.once('message', () => resolve());
            worker.once('error', reject);
          }),
      ),
    );
    await Promise.all(workers.map((w) => w.terminate()));
    const [inside, mostAtOnce, entries] = new Int32Array(counters);
    expect(entries).toBe(3 * rounds);
    expect(mostAtOnce).toBe(1);
    expect(inside).toBe(0);
    expect(new Int32Array(lock)[0]).toBe(0);
  });
});
