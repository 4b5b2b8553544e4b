import { describe, expect, it } from 'vitest';
import type { RateLimits } from '../../core/ports/index.js';
import { TokenLeases, leaseTarget } from './token-leases.js';

const limits = (requestsPerSecond: number, burst: number, elementsPerSecond = 0, elementsBurst = 0): RateLimits => ({
  requestsPerSecond,
  burst,
  elementsPerSecond,
  elementsBurst,
});
const grant = (requests: number, elements = 0) => ({ requests, elements, remainingAfter: 10, resetSeconds: 1 });

describe('leaseTarget', () => {
  it('is leaseMs of each rate, at most half its burst, and none under two tokens', () => {
    expect(leaseTarget(limits(1000, 5000), 100)).toEqual({ requests: 100, elements: 0 });
    expect(leaseTarget(limits(1000, 50), 100)).toEqual({ requests: 25, elements: 0 });
    expect(leaseTarget(limits(10, 20), 100)).toEqual({ requests: 0, elements: 0 });
    expect(leaseTarget(limits(0, 20, 1e6, 1e6), 100)).toEqual({ requests: 0, elements: 100_000 });
    expect(leaseTarget(limits(1000, 5000), 0)).toEqual({ requests: 0, elements: 0 });
  });
});

describe('TokenLeases', () => {
  it('spends held tokens, then answers undefined so the request goes to Redis', () => {
    const leases = new TokenLeases(100, () => 0);
    const l = limits(1000, 5000);
    expect(leases.take('k', 0, l)).toBeUndefined();
    leases.add('k', l, grant(2));
    expect(leases.take('k', 0, l)).toMatchObject({ allowed: true, remaining: 11, limit: 5000 });
    expect(leases.take('k', 0, l)).toMatchObject({ allowed: true, remaining: 10 });
    expect(leases.take('k', 0, l)).toBeUndefined();
  });

  it('covers a request only when it holds both its request token and its elements', () => {
    const leases = new TokenLeases(100, () => 0);
    const l = limits(1000, 5000, 1e6, 1e6);
    leases.add('k', l, grant(5, 100));
    expect(leases.take('k', 150, l)).toBeUndefined();
    expect(leases.take('k', 100, l)).toMatchObject({ allowed: true });
    expect(leases.take('k', 1, l)).toBeUndefined();
  });

  it('drops a holding when it expires or the limits change, and asks only for what it lacks', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now);
    const l = limits(1000, 5000);
    leases.add('k', l, grant(60));
    expect(leases.wanted('k', l)).toEqual({ requests: 40, elements: 0 });
    expect(leases.take('k', 0, limits(2000, 5000))).toBeUndefined();
    expect(leases.size).toBe(0);
    leases.add('k', l, grant(60));
    now = 100;
    expect(leases.take('k', 0, l)).toBeUndefined();
    expect(leases.wanted('k', l)).toEqual({ requests: 100, elements: 0 });
    expect(leases.wanted('k', limits(10, 20))).toBeUndefined();
  });

  it('sweeps the expired holdings of tenants that went quiet', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now);
    const l = limits(1000, 5000);
    for (let i = 0; i < 50; i++) leases.add(`quiet-${i}`, l, grant(5));
    now = 20_000;
    leases.add('active', l, grant(5));
    expect(leases.size).toBe(1);
  });
});

describe('TokenLeases renewal ahead of time', () => {
  const l = limits(1000, 5000);

  it('names a warm holding past half its life, once, until its renewal comes back', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 1000);
    leases.add('k', l, grant(100));
    expect(leases.dueForRenewal()).toEqual([]);
    now = 50;
    expect(leases.dueForRenewal()).toEqual([{ key: 'k', limits: l }]);
    expect(leases.dueForRenewal()).toEqual([]);
    // Three tokens spent while the call was out come out of the fresh grant; the clock restarts.
    for (let i = 0; i < 3; i++) leases.take('k', 0, l);
    leases.renewed('k', l, { requests: 100, elements: 0 }, grant(100));
    expect(leases.snapshot('k', l)).toEqual({ requests: 97, elements: 0 });
    now = 90;
    expect(leases.take('k', 0, l)).toMatchObject({ allowed: true });
    expect(leases.dueForRenewal()).toEqual([]);
    now = 110;
    expect(leases.dueForRenewal()).toHaveLength(1);
  });

  it('names a holding under half its target at once, and a take reports it', () => {
    const leases = new TokenLeases(100, () => 0, 1000);
    leases.add('k', l, grant(51));
    expect(leases.take('k', 0, l)).toBeDefined();
    expect(leases.lowAndWarm('k')).toBe(false);
    expect(leases.take('k', 0, l)).toBeDefined();
    expect(leases.lowAndWarm('k')).toBe(true);
    expect(leases.markRenewing('k')).toBe(true);
    expect(leases.markRenewing('k')).toBe(false);
    expect(leases.dueForRenewal()).toEqual([]);
    leases.endRenewal('k');
    expect(leases.dueForRenewal()).toHaveLength(1);
  });

  it('lets a holding unused for keepWarmMs expire, and renews nothing when keepWarmMs is 0', () => {
    let now = 0;
    const warm = new TokenLeases(100, () => now, 1000);
    const cold = new TokenLeases(100, () => now, 0);
    warm.add('k', l, grant(100));
    cold.add('k', l, grant(100));
    for (now = 50; now <= 1000; now += 50) {
      for (const due of warm.dueForRenewal()) warm.renewed(due.key, l, warm.snapshot(due.key, l), grant(100));
    }
    expect(cold.dueForRenewal()).toEqual([]);
    expect(cold.take('k', 0, l)).toBeUndefined();
    // Used at 0, renewed until 1000: still held at 1050, not renewed after, gone at 1150.
    now = 1050;
    expect(warm.dueForRenewal()).toEqual([]);
    expect(warm.size).toBe(1);
    now = 1150;
    expect(warm.dueForRenewal()).toEqual([]);
    expect(warm.size).toBe(0);
  });

  it('keeps a warm holding spendable past its expiry until a renewal comes back, down to zero, and renews it again after a failure', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 1000);
    leases.add('k', l, grant(3));
    now = 60;
    expect(leases.dueForRenewal()).toHaveLength(1);
    now = 500; // Redis is slow: the renewal has not come back
    for (let i = 0; i < 3; i++) expect(leases.take('k', 0, l)).toMatchObject({ allowed: true });
    expect(leases.take('k', 0, l)).toBeUndefined();
    leases.endRenewal('k');
    expect(leases.dueForRenewal()).toEqual([{ key: 'k', limits: l }]);
    // Reconciled: the three spent come out of the fresh grant.
    leases.renewed('k', l, { requests: 0, elements: 0 }, grant(100));
    expect(leases.snapshot('k', l)).toEqual({ requests: 100, elements: 0 });
  });

  it('renews a warm holding whose tick came late (past its expiry) instead of dropping it; a cold one lapses', () => {
    let now = 0;
    const warm = new TokenLeases(100, () => now, 1000);
    const cold = new TokenLeases(100, () => now, 0);
    warm.add('k', l, grant(10));
    cold.add('k', l, grant(10));
    now = 300;
    expect(cold.take('k', 0, l)).toBeUndefined();
    expect(warm.take('k', 0, l)).toMatchObject({ allowed: true });
    expect(warm.dueForRenewal()).toHaveLength(1);
  });

  it('never holds more than a grant: a renewal that finds the holding gone keeps the grant less what it gave back', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 1000);
    leases.add('k', l, grant(100));
    now = 60;
    expect(leases.dueForRenewal()).toHaveLength(1);
    // Dropped while the renewal was out (the tier changed and back), having spent some of what it gave back.
    expect(leases.take('k', 0, limits(2000, 5000))).toBeUndefined();
    leases.renewed('k', l, { requests: 100, elements: 0 }, grant(100));
    expect(leases.snapshot('k', l)).toEqual({ requests: 0, elements: 0 });
  });
});

