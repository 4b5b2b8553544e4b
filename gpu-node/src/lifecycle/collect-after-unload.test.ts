import { afterEach, describe, expect, it, vi } from 'vitest';
import { CollectAfterQuiet } from './collect-after-unload.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('a full collection after unloads', () => {
  it('collects once per burst of unloads, after the burst went quiet', () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const collector = new CollectAfterQuiet(collect, 1000);
    for (let i = 0; i < 100; i++) {
      collector.schedule();
      vi.advanceTimersByTime(20);
    }
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(999);
    expect(collect).toHaveBeenCalledTimes(1);
    collector.schedule();
    vi.advanceTimersByTime(1000);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('still collects when unloads never pause for the quiet time (load/unload churn)', () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const collector = new CollectAfterQuiet(collect, 1000, 3000);
    // An unload every 500 ms for 10 s: the quiet time never passes, the longest wait does.
    for (let i = 0; i < 20; i++) {
      collector.schedule();
      vi.advanceTimersByTime(500);
    }
    expect(collect.mock.calls.length).toBeGreaterThanOrEqual(3);
    expect(collect.mock.calls.length).toBeLessThanOrEqual(4);
  });
});
