import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallDeadlines } from './h2-call-deadlines.js';

describe('the upstream calls\' deadlines on one timer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires each deadline once it passes, in deadline order, whatever order they came in', () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    const start = Date.now();
    deadlines.add(start + 300, () => fired.push('c'));
    deadlines.add(start + 100, () => fired.push('a'));
    deadlines.add(start + 200, () => fired.push('b'));
    deadlines.add(start + 200, () => fired.push('b2'));
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['a']);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['a', 'b', 'b2']);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['a', 'b', 'b2', 'c']);
    expect(deadlines.size).toBe(0);
  });

  it('never fires a cancelled deadline, and still fires the ones after it', () => {
    const deadlines = new CallDeadlines();
    const fired: number[] = [];
    const start = Date.now();
    const entries = [100, 200, 300].map((ms) => deadlines.add(start + ms, () => fired.push(ms)));
    deadlines.cancel(entries[0]!);
    deadlines.cancel(entries[1]!);
    deadlines.cancel(entries[1]!);
    vi.advanceTimersByTime(250);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(50);
    expect(fired).toEqual([300]);
  });

  it('arms one timer for calls sharing a timeout, and moves it only for an earlier deadline', () => {
    const deadlines = new CallDeadlines();
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const fired: string[] = [];
    for (let i = 0; i < 100; i++) {
      const entry = deadlines.add(Date.now() + 30_000, () => fired.push('late'));
      vi.advanceTimersByTime(1);
      deadlines.cancel(entry);
    }
    expect(armed).toHaveBeenCalledTimes(1);
    deadlines.add(Date.now() + 30_000, () => fired.push('long'));
    deadlines.add(Date.now() + 50, () => fired.push('short'));
    expect(armed).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(50);
    expect(fired).toEqual(['short']);
    // The timer then fires once for the first call's (cancelled) deadline and is moved to the one left.
    vi.advanceTimersByTime(30_000);
    expect(fired).toEqual(['short', 'long']);
    armed.mockRestore();
  });

  it('a deadline already passed fires on the next timer turn, not inside add', () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    deadlines.add(Date.now() - 5, () => fired.push('past'));
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual(['past']);
  });

  it('keeps the process alive only while a deadline waits (the timer is unref\'d when none does)', () => {
    const deadlines = new CallDeadlines();
    const entry = deadlines.add(Date.now() + 1000, () => undefined);
    const timer = vi.getTimerCount() === 1 ? (deadlines as unknown as { timer: NodeJS.Timeout }).timer : undefined;
    expect(timer?.hasRef()).toBe(true);
    deadlines.cancel(entry);
    expect(timer?.hasRef()).toBe(false);
    deadlines.add(Date.now() + 2000, () => undefined);
    expect(timer?.hasRef()).toBe(true);
  });

  it('a callback that throws leaves the later deadlines watched', () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    deadlines.add(Date.now() + 10, () => {
      throw new Error('boom');
    });
    deadlines.add(Date.now() + 20, () => fired.push('later'));
    expect(() => vi.advanceTimersByTime(10)).toThrow('boom');
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['later']);
  });
});
