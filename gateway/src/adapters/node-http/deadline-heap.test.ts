import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../shared/test/support/index.js';
import { DeadlineHeap } from './deadline-heap.js';

describe('DeadlineHeap: many deadlines on one timer', () => {
  it('expires live entries in deadline order, an earlier one added later included, and never a cancelled one', async () => {
    const heap = new DeadlineHeap();
    const expired: string[] = [];
    const target = (name: string) => ({ expire: () => void expired.push(name) });
    const start = Date.now();
    heap.add(start + 1_000, target('late'));
    heap.add(start + 60, target('third'));
    const cancelled = heap.add(start + 30, target('cancelled'));
    heap.add(start + 40, target('second'));
    heap.add(start + 20, target('first'));
    heap.cancel(cancelled);
    heap.cancel(cancelled); // twice: counted once
    await waitFor(() => expired.length === 3, { what: 'three deadlines passed' });
    expect(expired).toEqual(['first', 'second', 'third']);
    expect(Date.now() - start).toBeLessThan(1_000);
    await waitFor(() => expired.length === 4, { what: 'the late one' });
    expect(expired).toEqual(['first', 'second', 'third', 'late']);
    expect(heap.size).toBe(0);
  });

  it('keeps memory bounded when calls settle long before their deadlines', () => {
    const heap = new DeadlineHeap();
    const held = heap.add(Date.now() + 60_000, { expire: () => undefined });
    for (let i = 0; i < 10_000; i++) heap.cancel(heap.add(Date.now() + 60_000 + i, { expire: () => undefined }));
    expect(heap.size).toBeLessThanOrEqual(2 + 256 + 1);
    heap.cancel(held);
  });
});
