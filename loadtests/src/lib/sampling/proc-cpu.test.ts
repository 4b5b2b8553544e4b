import { describe, expect, it } from 'vitest';
import { cpuUsPerRequest, processCpuSeconds, threadCpuSeconds } from './proc-cpu.js';

describe('processCpuSeconds', () => {
  it.runIf(process.platform === 'linux')('reads a non-decreasing figure for this process', async () => {
    const before = await processCpuSeconds(process.pid);
    let x = 0;
    for (let i = 0; i < 1e6; i++) x += i;
    const after = await processCpuSeconds(process.pid);
    expect(x).toBeGreaterThan(0);
    expect(before).toBeGreaterThanOrEqual(0);
    expect(after).toBeGreaterThanOrEqual(before);
  });

  it('is NaN for a process that does not exist', async () => {
    expect(await processCpuSeconds(2 ** 30)).toBeNaN();
    expect(await threadCpuSeconds(2 ** 30, 2 ** 30)).toBeNaN();
  });

  it.runIf(process.platform === 'linux')("reads the main thread's share, at most the whole process's", async () => {
    // Read the thread first: the process figure read after it includes everything the thread had.
    const main = await threadCpuSeconds(process.pid, process.pid);
    const whole = await processCpuSeconds(process.pid);
    expect(main).toBeGreaterThanOrEqual(0);
    expect(main).toBeLessThanOrEqual(whole);
  });
});

describe('cpuUsPerRequest', () => {
  it('divides the CPU used by the requests', () => {
    expect(cpuUsPerRequest(1, 1.5, 1000)).toBe(500);
    expect(cpuUsPerRequest(1, 2, 0)).toBeNaN();
  });
});
