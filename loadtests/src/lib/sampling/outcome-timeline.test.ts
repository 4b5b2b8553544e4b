import { describe, expect, it } from 'vitest';
import { bucketTimeline, failureKinds, phaseCounts, recoveryAfter, type Outcome } from './outcome-timeline.js';

/** One request every 10 ms from `from` to `to`, failing inside [failFrom, failTo). */
function steady(from: number, to: number, failFrom = Infinity, failTo = Infinity): Outcome[] {
  const out: Outcome[] = [];
  for (let t = from; t < to; t += 10) {
    const ok = !(t >= failFrom && t < failTo);
    out.push(ok ? { tMs: t, ok, latencyMs: 5 } : { tMs: t, ok, latencyMs: 1, error: 'UNAVAILABLE: node gone' });
  }
  return out;
}

describe('bucketTimeline', () => {
  it('counts per bucket and per second', () => {
    const buckets = bucketTimeline(steady(0, 2000, 500, 700), 500, 2000);
    expect(buckets.map((b) => [b.ok, b.failed])).toEqual([[50, 0], [30, 20], [50, 0], [50, 0]]);
    expect(buckets[0]?.okPerSec).toBe(100);
    expect(buckets[1]?.failedPerSec).toBe(40);
    expect(buckets[0]?.p99Ms).toBe(5);
  });

  it('leaves outcomes past the end out', () => {
    expect(bucketTimeline(steady(0, 3000), 1000, 2000)).toHaveLength(2);
  });
});

describe('recoveryAfter', () => {
  it('is 0 when nothing failed after the event', () => {
    expect(recoveryAfter(steady(0, 5000), 1000, { endMs: 5000 })).toEqual({ recoveryMs: 0, failuresAfter: 0, worstRate: 1 });
  });

  it('ends where the failing windows end', () => {
    // Failures in [1000, 1300): the window starting at 1300 is the first clean one for good.
    const r = recoveryAfter(steady(0, 6000, 1000, 1300), 1000, { endMs: 6000 });
    expect(r.recoveryMs).toBe(300);
    expect(r.failuresAfter).toBe(30);
    expect(r.worstRate).toBeCloseTo(0.7);
  });

  it('tolerates stray failures under the threshold', () => {
    const outcomes = steady(0, 6000).map((o) => (o.tMs === 2000 ? { ...o, ok: false } : o));
    // One failure in 100 per window: 99% passes at the default threshold, not at 99.5%.
    expect(recoveryAfter(outcomes, 1000, { endMs: 6000 }).recoveryMs).toBe(0);
    expect(recoveryAfter(outcomes, 1000, { endMs: 6000, threshold: 0.995 }).recoveryMs).toBe(1100);
  });

  it('counts a window without requests as failing, and is undefined when never recovered', () => {
    // Windows starting at 1000..1500 hold nothing; the one at 1600 holds 2500..2590, all good.
    const gap = [...steady(0, 1000), ...steady(2500, 5000)];
    expect(recoveryAfter(gap, 1000, { endMs: 5000 }).recoveryMs).toBe(600);
    expect(recoveryAfter(steady(0, 5000, 1000, 5000), 1000, { endMs: 5000 }).recoveryMs).toBeUndefined();
  });
});

describe('failureKinds and phaseCounts', () => {
  it('groups failures and summarizes a phase', () => {
    const outcomes = steady(0, 1000, 0, 100);
    expect(failureKinds(outcomes)).toEqual([{ error: 'UNAVAILABLE: node gone', count: 10 }]);
    expect(phaseCounts(outcomes, 0, 200)).toEqual({ ok: 10, failed: 10, errorRate: 0.5, p99Ms: 5 });
    expect(phaseCounts(outcomes, 5000, 6000).errorRate).toBeNaN();
  });
});
