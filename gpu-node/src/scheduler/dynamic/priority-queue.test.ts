import { describe, expect, it } from 'vitest';
import { batcherOptions } from './batcher-options.js';
import type { QueuePolicy } from './batcher-options.js';
import { PriorityQueue } from './priority-queue.js';
import type { QueueEntry } from './priority-queue.js';

const policy = (p: Partial<QueuePolicy>): QueuePolicy => ({
  timeoutAction: 'REJECT',
  defaultTimeoutUs: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
  ...p,
});

function entry(q: PriorityQueue<QueueEntry>, id: string, now: number, priority?: number, timeoutUs?: number): QueueEntry {
  const a = q.admit(id, priority, timeoutUs, now);
  const e: QueueEntry = { id, batchSize: 1, signature: '', enqueuedUs: now, ...a };
  q.push(e);
  return e;
}
const ids = (q: PriorityQueue<QueueEntry>) => [...q].map((e) => e.id);

describe('PriorityQueue', () => {
  it('inServingOrder: the one list itself when it holds every request, the full order otherwise', () => {
    const single = new PriorityQueue<QueueEntry>(batcherOptions({}));
    entry(single, 'a', 0);
    entry(single, 'b', 0);
    const order = single.inServingOrder();
    expect(Array.isArray(order)).toBe(true);
    expect([...order].map((e) => e.id)).toEqual(['a', 'b']);
    const levels = new PriorityQueue<QueueEntry>(batcherOptions({ priorityLevels: 2, defaultPriorityLevel: 2 }));
    entry(levels, 'low', 0, 2);
    entry(levels, 'high', 0, 1);
    expect(Array.isArray(levels.inServingOrder())).toBe(false);
    expect([...levels.inServingOrder()].map((e) => e.id)).toEqual(['high', 'low']);
  });

  it('maps priority 0 and priorities beyond priority_levels to the default level', () => {
    const q = new PriorityQueue(batcherOptions({ priorityLevels: 3, defaultPriorityLevel: 2 }));
    expect([0, 1, 2, 3, 4, 99].map((p) => q.levelOf(p))).toEqual([2, 1, 2, 3, 2, 2]);
    const single = new PriorityQueue(batcherOptions({}));
    expect([0, 1, 7].map((p) => single.levelOf(p))).toEqual([0, 0, 0]);
  });

  it('serves lower level numbers first, FIFO within a level', () => {
    const q = new PriorityQueue<QueueEntry>(batcherOptions({ priorityLevels: 3, defaultPriorityLevel: 2 }));
    entry(q, 'a3', 0, 3);
    entry(q, 'b2', 0, 0);
    entry(q, 'c1', 0, 1);
    entry(q, 'd2', 0, 2);
    expect(ids(q)).toEqual(['c1', 'b2', 'd2', 'a3']);
    expect(q.take(2).map((e) => e.id)).toEqual(['c1', 'b2']);
    expect(ids(q)).toEqual(['d2', 'a3']);
  });

  describe('timeouts', () => {
    it('uses the default timeout, from enqueue time', () => {
      const q = new PriorityQueue(batcherOptions({ defaultQueuePolicy: { defaultTimeoutUs: 100 } }));
      expect(q.admit('', 0, undefined, 1000).deadlineUs).toBe(1100);
    });
    it('honours an override only when allowed, non-zero and shorter than the default', () => {
      const allowed = new PriorityQueue(
        batcherOptions({ defaultQueuePolicy: { defaultTimeoutUs: 100, allowTimeoutOverride: true } }),
      );
      expect(allowed.admit('', 0, 40, 0).deadlineUs).toBe(40);
      expect(allowed.admit('', 0, 0, 0).deadlineUs).toBe(100);
      expect(allowed.admit('', 0, 500, 0).deadlineUs).toBe(100);
      const notAllowed = new PriorityQueue(batcherOptions({ defaultQueuePolicy: { defaultTimeoutUs: 100 } }));
      expect(notAllowed.admit('', 0, 40, 0).deadlineUs).toBe(100);
    });
    it('ignores the override when the default timeout is 0 (no deadline at all)', () => {
      const q = new PriorityQueue(batcherOptions({ defaultQueuePolicy: { allowTimeoutOverride: true } }));
      expect(q.admit('', 0, 40, 0).deadlineUs).toBeUndefined();
    });
    it('uses the level policy from priority_queue_policy', () => {
      const q = new PriorityQueue(
        batcherOptions({
          priorityLevels: 2,
          defaultPriorityLevel: 2,
          priorityQueuePolicy: new Map([[1, policy({ defaultTimeoutUs: 7 })]]),
        }),
      );
      expect(q.admit('', 1, undefined, 0).deadlineUs).toBe(7);
      expect(q.admit('', 2, undefined, 0).deadlineUs).toBeUndefined();
    });
  });

  it('REJECT removes expired requests; DELAY puts them after the unexpired ones of their level', () => {
    const q = new PriorityQueue<QueueEntry>(
      batcherOptions({
        priorityLevels: 2,
        defaultPriorityLevel: 2,
        priorityQueuePolicy: new Map([
          [1, policy({ timeoutAction: 'DELAY', defaultTimeoutUs: 100 })],
          [2, policy({ timeoutAction: 'REJECT', defaultTimeoutUs: 100 })],
        ]),
      }),
    );
    entry(q, 'd1', 0, 1);
    entry(q, 'r1', 0, 2);
    entry(q, 'r2', 50, 2);
    expect(q.nextDeadline()).toBe(100);
    expect(q.expire(99)).toEqual([]);
    entry(q, 'd2', 60, 1);
    expect(q.expire(100).map((e) => e.id)).toEqual(['r1']);
    expect(ids(q)).toEqual(['d2', 'd1', 'r2']);
    expect(q.size).toBe(3);
    expect(q.nextDeadline()).toBe(150);
  });

  it('limits each level to max_queue_size requests, delayed ones included', () => {
    const q = new PriorityQueue<QueueEntry>(
      batcherOptions({
        priorityLevels: 2,
        defaultPriorityLevel: 1,
        defaultQueuePolicy: { maxQueueSize: 1, timeoutAction: 'DELAY', defaultTimeoutUs: 10 },
      }),
    );
    entry(q, 'a', 0, 1);
    q.expire(10);
    expect(() => q.admit('b', 1, undefined, 10)).toThrow('[request id: b] Exceeds maximum queue size');
    expect(() => q.admit('', 1, undefined, 10)).toThrow(/^Exceeds maximum queue size$/);
    expect(() => entry(q, 'c', 10, 2)).not.toThrow();
  });

  it('removes a cancelled request from either queue of its level', () => {
    const q = new PriorityQueue<QueueEntry>(batcherOptions({ defaultQueuePolicy: { timeoutAction: 'DELAY', defaultTimeoutUs: 5 } }));
    const a = entry(q, 'a', 0);
    const b = entry(q, 'b', 3);
    q.expire(5);
    expect(q.remove(a)).toBe(true);
    expect(q.remove(a)).toBe(false);
    expect(q.remove(b)).toBe(true);
    expect(q.size).toBe(0);
    expect(q.nextDeadline()).toBeUndefined();
  });
});
