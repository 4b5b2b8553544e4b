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

  it('names a warm holding spent from past half its life, once, until its renewal comes back', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 1000);
    leases.add('k', l, grant(100));
    leases.take('k', 0, l);
    expect(leases.dueForRenewal()).toEqual([]);
    expect(leases.renewalAhead).toBe(true);
    now = 50;
    expect(leases.dueForRenewal()).toEqual([{ key: 'k', limits: l }]);
    // Named due, then out for renewal: the tick goes on either way (it would be started again by the next take).
    expect(leases.renewalAhead).toBe(true);
    expect(leases.dueForRenewal()).toEqual([]);
    expect(leases.renewalAhead).toBe(true);
    // Three tokens spent while the call was out come out of the fresh grant; the clock restarts.
    for (let i = 0; i < 3; i++) leases.take('k', 0, l);
    leases.renewed('k', l, { requests: 99, elements: 0 }, grant(100));
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

  it('renews nothing for a holding not spent from, keeps it spendable for keepWarmMs, then lets it lapse; nothing at all when keepWarmMs is 0', () => {
    let now = 0;
    const warm = new TokenLeases(100, () => now, 1000);
    const cold = new TokenLeases(100, () => now, 0);
    warm.add('k', l, grant(100));
    cold.add('k', l, grant(100));
    // Idle: ten leases long, no renewal named, and no tick needed.
    for (now = 25; now <= 1000; now += 25) {
      expect(warm.dueForRenewal()).toEqual([]);
      expect(warm.renewalAhead).toBe(false);
    }
    expect(cold.dueForRenewal()).toEqual([]);
    expect(cold.take('k', 0, l)).toBeUndefined();
    // Back at 1000 (within keepWarmMs of its grant): decided from the old holding, and due at once.
    now = 1000;
    expect(warm.take('k', 0, l)).toMatchObject({ allowed: true });
    expect(warm.dueForRenewal()).toEqual([{ key: 'k', limits: l }]);
    warm.renewed('k', l, { requests: 99, elements: 0 }, grant(100));
    // Not spent from again: lapses keepWarmMs after that last take.
    now = 1900;
    expect(warm.dueForRenewal()).toEqual([]);
    expect(warm.size).toBe(1);
    now = 2001;
    expect(warm.dueForRenewal()).toEqual([]);
    expect(warm.size).toBe(0);
    expect(warm.take('k', 0, l)).toBeUndefined();
  });

  it('does not ask again and again for a tenant held at its limit while it sends nothing', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 5000);
    leases.add('k', l, grant(2));
    leases.take('k', 0, l);
    leases.take('k', 0, l);
    expect(leases.dueForRenewal()).toHaveLength(1);
    // The bucket is empty: the renewal grants nothing, and the holding stays empty.
    leases.renewed('k', l, { requests: 0, elements: 0 }, grant(0));
    for (now = 25; now <= 2000; now += 25) expect(leases.dueForRenewal()).toEqual([]);
    expect(leases.take('k', 0, l)).toBeUndefined();
  });

  it('renews a slow tenant about once per take, not once per half lease', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 5000);
    leases.add('k', l, grant(100));
    let renewals = 0;
    // One take every 400 ms for 4 s, a tick every 25 ms: four leases between two takes.
    for (now = 0; now < 4000; now += 25) {
      if (now % 400 === 0) expect(leases.take('k', 0, l)).toMatchObject({ allowed: true });
      for (const due of leases.dueForRenewal()) {
        renewals++;
        leases.renewed(due.key, l, leases.snapshot(due.key, l), grant(100));
      }
    }
    expect(renewals).toBe(10);
  });

  it('keeps a warm holding spendable past its expiry until a renewal comes back, down to zero, and renews it again after a failure', () => {
    let now = 0;
    const leases = new TokenLeases(100, () => now, 1000);
    leases.add('k', l, grant(3));
    expect(leases.take('k', 0, l)).toMatchObject({ allowed: true });
    now = 60;
    expect(leases.dueForRenewal()).toHaveLength(1);
    now = 500; // Redis is slow: the renewal has not come back
    for (let i = 0; i < 2; i++) expect(leases.take('k', 0, l)).toMatchObject({ allowed: true });
    expect(leases.take('k', 0, l)).toBeUndefined();
    leases.endRenewal('k');
    expect(leases.dueForRenewal()).toEqual([{ key: 'k', limits: l }]);
    // Reconciled: the two spent come out of the fresh grant.
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
    leases.take('k', 0, l);
    now = 60;
    expect(leases.dueForRenewal()).toHaveLength(1);
    // Dropped while the renewal was out (the tier changed and back), having spent some of what it gave back.
    expect(leases.take('k', 0, limits(2000, 5000))).toBeUndefined();
    leases.renewed('k', l, { requests: 100, elements: 0 }, grant(100));
    expect(leases.snapshot('k', l)).toEqual({ requests: 0, elements: 0 });
  });
});

