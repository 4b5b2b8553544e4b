import { describe, expect, it } from 'vitest';
import { startOpenLoad } from './open-loop.js';

describe('startOpenLoad', () => {
  it('keeps sending while calls hang, drops beyond the cap, and counts latency from the intended time', async () => {
    const pending: (() => void)[] = [];
    const load = startOpenLoad({
      nextGapMs: () => 1,
      maxOutstanding: 5,
      call: () => new Promise<void>((resolve) => pending.push(resolve)),
    });
    const window = await load.measure(30);
    // None answered, so the first five stay outstanding and every later intended send is dropped.
    expect(load.outstanding()).toBe(5);
    expect(window.dropped).toBeGreaterThan(0);
    expect(window.latenciesUs).toHaveLength(0);
    const stopped = load.stop();
    for (const resolve of pending) resolve();
    await stopped;
    expect(load.outstanding()).toBe(0);
  });

  it('records successes and failures with tags and a latency for every success', async () => {
    let calls = 0;
    const load = startOpenLoad({
      nextGapMs: () => 2,
      maxOutstanding: 100,
      tags: 2,
      call: async (seq) => {
        calls += 1;
        await new Promise((r) => setTimeout(r, 3));
        if (seq % 2 === 1) throw new Error('odd');
        return { sendUs: 1, recvUs: 2 };
      },
    });
    const window = await load.measure(40);
    await load.stop();
    expect(calls).toBeGreaterThan(0);
    expect(window.latenciesUs.length).toBeGreaterThan(0);
    // Only sign and finiteness: how long a timer really held is the machine's business, not this test's.
    expect(window.latenciesUs.every((us) => Number.isFinite(us) && us > 0)).toBe(true);
    expect(window.latencyTags.every((t) => t === 0)).toBe(true);
    expect(window.errorsByTag[0]).toBe(0);
    expect(window.errorsByTag[1]).toBe(window.errors);
    expect(window.sendUsTotal).toBe(window.latenciesUs.length);
    expect(load.firstError()).toBe('odd');
  });
});
