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

/** An event loop the test turns by hand: `endOfTurn` tasks run when the test calls `turn()`. */
function manualLoop() {
  const tasks: (() => void)[] = [];
  return {
    endOfTurn: (task: () => void) => void tasks.push(task),
    pending: () => tasks.length,
    /** Lets the promise reactions of the current turn run, then ends the turn. */
    async turn() {
      await new Promise<void>((r) => queueMicrotask(r));
      for (const task of tasks.splice(0)) task();
    },
  };
}

describe('KeyedBatcher', () => {
  it('sends what one turn submitted as one call at its end; what comes while it is in flight goes next, in order', async () => {
    const { calls, run } = heldRun();
    const loop = manualLoop();
    const batcher = new KeyedBatcher<number, string>(run, { endOfTurn: loop.endOfTurn });
    const first = [1, 2].map((n) => batcher.submit('t', n));
    expect(calls).toHaveLength(0);
    await loop.turn();
    expect(calls.map((c) => c.items)).toEqual([[1, 2]]);
    const rest = [3, 4, 5].map((n) => batcher.submit('t', n));
    await loop.turn();
    expect(calls).toHaveLength(1); // still in flight: 3, 4, 5 wait for it
    expect(loop.pending()).toBe(0);
    calls[0]!.answer(['r1', 'r2']);
    expect(await Promise.all(first)).toEqual(['r1', 'r2']);
    await loop.turn();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3, 4, 5]]);
    calls[1]!.answer(['r3', 'r4', 'r5']);
    expect(await Promise.all(rest)).toEqual(['r3', 'r4', 'r5']);
    await loop.turn();
    expect([calls.length, batcher.busyKeys]).toEqual([2, 0]);
  });

  it('sends a lone item in the turn that submitted it, without waiting for company (real event loop)', async () => {
    const { calls, run } = heldRun();
    const batcher = new KeyedBatcher<number, string>(run);
    const one = batcher.submit('t', 1);
    const two = batcher.submit('t', 2);
    await new Promise<void>((r) => setImmediate(r));
    expect(calls.map((c) => c.items)).toEqual([[1, 2]]);
    calls[0]!.answer(['a', 'b']);
    expect(await Promise.all([one, two])).toEqual(['a', 'b']);
  });

  it('keeps keys apart: another key does not wait for a call in flight', async () => {
    const { calls, run } = heldRun();
    const loop = manualLoop();
    const batcher = new KeyedBatcher<number, string>(run, { endOfTurn: loop.endOfTurn });
    void batcher.submit('a', 1);
    await loop.turn();
    void batcher.submit('b', 2);
    void batcher.submit('a', 3);
    await loop.turn();
    expect(calls.map((c) => [c.key, c.items])).toEqual([['a', [1]], ['b', [2]]]);
  });

  it('fails every item of a failed batch with its error, and goes on with the next batch', async () => {
    const { calls, run } = heldRun();
    const loop = manualLoop();
    const batcher = new KeyedBatcher<number, string>(run, { endOfTurn: loop.endOfTurn });
    const batch = [1, 2].map((n) => batcher.submit('t', n));
    await loop.turn();
    const later = batcher.submit('t', 3);
    const boom = new Error('connection lost');
    calls[0]!.fail(boom);
    for (const result of await Promise.allSettled(batch)) expect(result).toEqual({ status: 'rejected', reason: boom });
    await loop.turn();
    expect(calls[1]!.items).toEqual([3]);
    calls[1]!.answer(['r3']);
    expect(await later).toBe('r3');
  });

  it('rejects a batch whose answer has the wrong length, and a run that throws synchronously', async () => {
    const { calls, run } = heldRun();
    const loop = manualLoop();
    const batcher = new KeyedBatcher<number, string>(run, { endOfTurn: loop.endOfTurn });
    const one = batcher.submit('t', 1);
    await loop.turn();
    calls[0]!.answer([]);
    await expect(one).rejects.toThrow(/a batch of 1 got 0 results/);
    const throwing = new KeyedBatcher<number, string>(
      () => {
        throw new Error('sync');
      },
      { endOfTurn: loop.endOfTurn },
    );
    const failed = throwing.submit('t', 1);
    await loop.turn();
    await expect(failed).rejects.toThrow('sync');
    expect(throwing.busyKeys).toBe(0);
  });

  it('splits a long queue into batches of at most maxBatch, one in flight at a time', async () => {
    const { calls, run } = heldRun();
    const loop = manualLoop();
    const batcher = new KeyedBatcher<number, string>(run, { maxBatch: 2, endOfTurn: loop.endOfTurn });
    const all = [0, 1, 2, 3, 4].map((n) => batcher.submit('t', n));
    for (let i = 0; i < 3; i++) {
      await loop.turn();
      expect(calls).toHaveLength(i + 1);
      calls[i]!.answer(calls[i]!.items.map(String));
    }
    expect(await Promise.all(all)).toEqual(['0', '1', '2', '3', '4']);
    expect(calls.map((c) => c.items)).toEqual([[0, 1], [2, 3], [4]]);
    expect(() => new KeyedBatcher(run, { maxBatch: 0 })).toThrow(/maxBatch/);
  });
});
