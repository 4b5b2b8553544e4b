import { describe, expect, it } from 'vitest';
import { KeyedBatcher } from './keyed-batcher.js';

/** A run function whose calls wait until the test answers them. */
function heldRun() {
  const calls: { key: string; items: readonly number[]; answer: (results: readonly string[]) => void; fail: (e: unknown) => void }[] = [];
  const run = (key: string, items: readonly number[]) =>
    new Promise<readonly string[]>((resolve, reject) => {
      calls.push({ key, items, answer: resolve, fail: reject });
    });
  return { calls, run };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('KeyedBatcher', () => {
  it('sends a lone item at once, and batches what arrives while its call is in flight, in order', async () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run);
    const first = batcher.submit('t', 1);
    expect(calls.map((c) => c.items)).toEqual([[1]]); // sent synchronously: no wait for company
    const rest = [2, 3, 4].map((n) => batcher.submit('t', n));
    expect(calls).toHaveLength(1);
    calls[0]!.answer(['r1']);
    expect(await first).toBe('r1');
    await flush();
    expect(calls.map((c) => c.items)).toEqual([[1], [2, 3, 4]]);
    calls[1]!.answer(['r2', 'r3', 'r4']);
    expect(await Promise.all(rest)).toEqual(['r2', 'r3', 'r4']);
    expect(batcher.busyKeys).toBe(0);
  });

  it('keeps keys apart: another key does not wait for a call in flight', () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run);
    void batcher.submit('a', 1);
    void batcher.submit('b', 2);
    void batcher.submit('a', 3);
    expect(calls.map((c) => [c.key, c.items])).toEqual([['a', [1]], ['b', [2]]]);
  });

  it('fails every item of a failed batch with its error, and goes on with the next batch', async () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run);
    const first = batcher.submit('t', 1);
    const batch = [2, 3].map((n) => batcher.submit('t', n));
    calls[0]!.answer(['r1']);
    await first;
    await flush();
    expect(calls[1]!.items).toEqual([2, 3]);
    const later = batcher.submit('t', 4);
    const boom = new Error('connection lost');
    calls[1]!.fail(boom);
    for (const result of await Promise.allSettled(batch)) expect(result).toEqual({ status: 'rejected', reason: boom });
    // 4 arrived while [2, 3] was in flight, so it went in the call after it.
    await flush();
    expect(calls[2]!.items).toEqual([4]);
    calls[2]!.answer(['r4']);
    expect(await later).toBe('r4');
  });

  it('rejects a batch whose answer has the wrong length, and a run that throws synchronously', async () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run);
    const one = batcher.submit('t', 1);
    calls[0]!.answer([]);
    await expect(one).rejects.toThrow(/a batch of 1 got 0 results/);
    const throwing = new KeyedBatcher<number, string>(() => {
      throw new Error('sync');
    });
    await expect(throwing.submit('t', 1)).rejects.toThrow('sync');
    expect(throwing.busyKeys).toBe(0);
  });

  it('splits a long queue into batches of at most maxBatch', async () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run, 2);
    const all = [0, 1, 2, 3, 4].map((n) => batcher.submit('t', n));
    for (let i = 0; i < 3; i++) {
      await flush();
      calls[i]!.answer(calls[i]!.items.map(String));
    }
    expect(await Promise.all(all)).toEqual(['0', '1', '2', '3', '4']);
    expect(calls.map((c) => c.items)).toEqual([[0], [1, 2], [3, 4]]);
    expect(() => new KeyedBatcher(run, 0)).toThrow(/maxBatch/);
  });
});
