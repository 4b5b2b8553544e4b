import { describe, expect, it } from 'vitest';
import { EndOfTurnWriter } from './end-of-turn-writer.js';

describe('EndOfTurnWriter', () => {
  it('writes what one turn pushed together, in order, after that turn; a later push waits for the next', async () => {
    const written: string[] = [];
    const turns: (() => void)[] = [];
    const writer = new EndOfTurnWriter<string>((item) => {
      written.push(item);
      if (item === 'b') writer.push('pushed during the flush');
    }, (task) => turns.push(task));
    writer.push('a');
    writer.push('b');
    expect(written).toEqual([]);
    expect(turns).toHaveLength(1);
    turns.shift()!();
    expect(written).toEqual(['a', 'b']);
    expect(turns).toHaveLength(1);
    turns.shift()!();
    expect(written).toEqual(['a', 'b', 'pushed during the flush']);
  });

  it('flushes with setImmediate by default: after the promise callbacks of the turn', async () => {
    const written: number[] = [];
    const writer = new EndOfTurnWriter<number>((n) => written.push(n));
    writer.push(1);
    await Promise.resolve();
    writer.push(2);
    expect(written).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual([1, 2]);
  });
});
