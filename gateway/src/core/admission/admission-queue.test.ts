import { describe, expect, it } from 'vitest';
import type { TesseraError } from '../../../../shared/src/errors/index.js';
import type { AdmissionRejectReason } from '../ports/index.js';
import { AdmissionQueue } from './admission-queue.js';
import type { AdmissionRequest } from './admission-queue.js';
import { FakeClock } from './clock.js';

/** A queue over a hand-driven fleet: `room` slots free, `capacity` in all, `exec` ms per batch. */
function setup(opts: { room?: number; capacity?: number; exec?: number | null; maxQueue?: number } = {}) {
  const clock = new FakeClock();
  const fleet = { room: opts.room ?? 0, capacity: opts.capacity ?? 4, exec: opts.exec ?? null };
  const dispatched: string[] = [];
  const rejected: { id: string; error: TesseraError }[] = [];
  const reasons: { tier: string; reason: AdmissionRejectReason }[] = [];
  const waits: number[] = [];
  const queue = new AdmissionQueue({
    name: 'm',
    maxQueue: opts.maxQueue ?? 10,
    clock,
    load: { room: () => fleet.room, capacity: () => fleet.capacity, execTimeMs: () => fleet.exec },
    observer: {
      dispatched: (_model, _tier, waitMs) => waits.push(waitMs),
      rejected: (_model, tier, reason) => reasons.push({ tier, reason }),
    },
  });
  const submit = (id: string, request: Partial<AdmissionRequest> & { tier?: string } = {}): void => {
    queue.admit(
      { tier: 'gold', priority: 1, share: 1, deadline: clock.now() + 10_000, ...request },
      {
        // The dispatcher consumes the room it was given, synchronously.
        dispatch: () => {
          fleet.room--;
          dispatched.push(id);
        },
        reject: (error) => rejected.push({ id, error }),
      },
    );
  };
  /** Frees `n` slots, as completions would, and lets the queue use them. */
  const free = (n: number): void => {
    fleet.room += n;
    queue.pump();
  };
  return { clock, fleet, queue, submit, free, dispatched, rejected, reasons, waits };
}

const bronze = { tier: 'bronze', priority: 3 };
const silver = { tier: 'silver', priority: 2 };

describe('AdmissionQueue', () => {
  it('dispatches at once while there is room, then by priority and FIFO within a priority', () => {
    const t = setup({ room: 1 });
    t.submit('a', bronze);
    expect(t.dispatched).toEqual(['a']);
    t.submit('b1', bronze);
    t.submit('s1', silver);
    t.submit('g1');
    t.submit('b2', bronze);
    t.submit('g2');
    expect(t.queue.depth).toBe(5);
    t.free(2);
    expect(t.dispatched).toEqual(['a', 'g1', 'g2']);
    t.free(3);
    expect(t.dispatched).toEqual(['a', 'g1', 'g2', 's1', 'b1', 'b2']);
    expect(t.queue.depth).toBe(0);
    expect(t.clock.pendingTimers).toBe(0);
    expect(t.rejected).toEqual([]);
  });

  it('reports the queue wait of each dispatched request', () => {
    const t = setup();
    t.submit('a');
    t.clock.advance(250);
    t.free(1);
    expect(t.waits).toEqual([250]);
  });

  it('limits a tier to its share of the queue and says so', () => {
    const t = setup({ maxQueue: 10 });
    for (let i = 0; i < 4; i++) t.submit(`b${i}`, { ...bronze, share: 0.3 });
    expect(t.queue.depthOf('bronze')).toBe(3);
    expect(t.rejected.map((r) => r.id)).toEqual(['b3']);
    expect(t.rejected[0]!.error.code).toBe('UNAVAILABLE');
    expect(t.rejected[0]!.error.message).toMatch(/tier 'bronze' already holds its share \(3\)/);
    expect(t.rejected[0]!.error.retryAfterMs).toBeGreaterThan(0);
    expect(t.reasons).toEqual([{ tier: 'bronze', reason: 'share_full' }]);
    // Other tiers still get in.
    t.submit('g');
    expect(t.queue.depth).toBe(4);
  });

  it('evicts the newest entry of the lowest tier when a higher tier finds the queue full', () => {
    const t = setup({ maxQueue: 4 });
    t.submit('s1', silver);
    t.submit('b1', bronze);
    t.submit('b2', bronze);
    t.submit('s2', silver);
    t.submit('g1');
    expect(t.rejected.map((r) => r.id)).toEqual(['b2']);
    expect(t.rejected[0]!.error.message).toMatch(/evicted .* by a higher-priority request/);
    t.submit('g2');
    expect(t.rejected.map((r) => r.id)).toEqual(['b2', 'b1']);
    t.submit('s3', silver);
    // No lower tier left to evict for silver: the newcomer itself is refused.
    expect(t.rejected.map((r) => r.id)).toEqual(['b2', 'b1', 's3']);
    expect(t.reasons.map((r) => r.reason)).toEqual(['evicted', 'evicted', 'queue_full']);
    t.submit('b3', bronze);
    expect(t.rejected.map((r) => r.id)).toEqual(['b2', 'b1', 's3', 'b3']);
    t.free(4);
    expect(t.dispatched).toEqual(['g1', 'g2', 's1', 's2']);
  });

  it('rejects fast when the estimated wait cannot meet the deadline', () => {
    // 4 slots in all, 100 ms per batch, none free: request k waits ceil(k / 4) batches.
    const t = setup({ capacity: 4, exec: 100 });
    for (let i = 0; i < 4; i++) t.submit(`early${i}`, { deadline: t.clock.now() + 200 });
    expect(t.queue.depth).toBe(4);
    t.submit('late', { deadline: t.clock.now() + 250 });
    expect(t.rejected.map((r) => r.id)).toEqual(['late']);
    expect(t.rejected[0]!.error.code).toBe('UNAVAILABLE');
    expect(t.rejected[0]!.error.message).toMatch(/cannot answer before the deadline \(estimated 300 ms, 250 ms left\)/);
    expect(t.rejected[0]!.error.retryAfterMs).toBe(200);
    // A higher tier is ahead of all four, so its estimate is one batch.
    t.submit('vip', { tier: 'platinum', priority: 0, deadline: t.clock.now() + 250 });
    expect(t.queue.depth).toBe(5);
    expect(t.reasons).toEqual([{ tier: 'gold', reason: 'deadline' }]);
  });

  it('estimates a decoupled stream (answerBy) against its stream deadline, and its queue wait against its queue deadline', () => {
    // A generation takes 5 s (the node's batch time of a decoupled model), the queue timeout is 1 s.
    const t = setup({ room: 1, capacity: 1, exec: 5000 });
    t.submit('unary', { deadline: t.clock.now() + 1000 });
    expect(t.rejected.map((r) => r.id)).toEqual(['unary']);
    t.submit('stream', { deadline: t.clock.now() + 1000, answerBy: t.clock.now() + 60_000 });
    expect(t.dispatched).toEqual(['stream']);
    // The one slot is taken: the next stream would wait a whole generation, past its queue deadline.
    t.submit('waiting', { deadline: t.clock.now() + 1000, answerBy: t.clock.now() + 60_000 });
    expect(t.rejected.map((r) => r.id)).toEqual(['unary', 'waiting']);
    // One whose queue deadline allows the wait is queued, and leaves when the slot frees.
    t.submit('patient', { deadline: t.clock.now() + 6000, answerBy: t.clock.now() + 60_000 });
    expect(t.queue.depth).toBe(1);
    t.free(1);
    expect(t.dispatched).toEqual(['stream', 'patient']);
  });

  it('rejects at once a request whose deadline already passed or that no node can serve', () => {
    const t = setup({ room: 5 });
    t.submit('past', { deadline: t.clock.now() });
    t.fleet.capacity = 0;
    t.submit('nowhere');
    expect(t.dispatched).toEqual([]);
    expect(t.reasons.map((r) => r.reason)).toEqual(['deadline', 'no_capacity']);
    expect(t.rejected[1]!.error.message).toMatch(/no node is ready to serve model 'm'/);
  });

  it('rejects expired entries at their deadline and never dispatches them afterwards', () => {
    const t = setup();
    t.submit('short', { deadline: t.clock.now() + 100 });
    t.submit('long', { deadline: t.clock.now() + 1000 });
    t.clock.advance(99);
    expect(t.rejected).toEqual([]);
    t.clock.advance(1);
    expect(t.rejected.map((r) => r.id)).toEqual(['short']);
    expect(t.rejected[0]!.error.code).toBe('UNAVAILABLE');
    expect(t.rejected[0]!.error.message).toMatch(/waited .* until its deadline/);
    t.free(5);
    expect(t.dispatched).toEqual(['long']);
    expect(t.reasons).toEqual([{ tier: 'gold', reason: 'expired' }]);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('drops a waiting request whose client went away', () => {
    const t = setup();
    const controller = new AbortController();
    t.submit('gone', { signal: controller.signal });
    t.submit('stays');
    controller.abort();
    expect(t.rejected.map((r) => [r.id, r.error.code])).toEqual([['gone', 'CANCELLED']]);
    t.free(5);
    expect(t.dispatched).toEqual(['stays']);
  });

  it('rejects everything waiting on close, and newcomers afterwards', () => {
    const t = setup();
    t.submit('a');
    t.submit('b', bronze);
    t.queue.close();
    t.submit('c');
    expect(t.rejected.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('dispatches a newcomer that finds room and nobody waiting without queueing it: no timer, no abort listener', () => {
    const t = setup({ room: 2 });
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    t.submit('a', { signal });
    expect(t.dispatched).toEqual(['a']);
    expect(t.waits).toEqual([0]);
    expect(t.queue.depth).toBe(0);
    expect(t.clock.pendingTimers).toBe(0);
    expect(listeners).toBe(0);
    // With somebody already waiting, a newcomer queues behind it even if room appears meanwhile.
    t.fleet.room = 0;
    t.submit('b');
    t.fleet.room = 1;
    t.submit('c');
    expect(t.dispatched).toEqual(['a', 'b']);
    expect(t.queue.depth).toBe(1);
  });

  it('refuses a nonsensical size', () => {
    expect(() => new AdmissionQueue({ name: 'm', maxQueue: 0, load: { room: () => 0, capacity: () => 1, execTimeMs: () => null } })).toThrow(
      /maxQueue must be a positive integer/,
    );
  });
});
