import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeldEvents, MAX_HELD_CHARS } from './held-events.js';

function recorder(events: number, maxHoldMs = 1000): { held: HeldEvents; writes: string[] } {
  const writes: string[] = [];
  return { held: new HeldEvents({ events, maxHoldMs }, (chunk) => writes.push(chunk)), writes };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HeldEvents', () => {
  it('interval 1 writes every event at once, as before', () => {
    const { held, writes } = recorder(1);
    for (const e of ['a', 'b', 'c']) held.add(e);
    expect(writes).toEqual(['a', 'b', 'c']);
  });

  it('writes the first event at once, then groups of N, and the rest on flush; the bytes are the same', () => {
    const { held, writes } = recorder(4);
    const events = Array.from({ length: 11 }, (_, i) => `data: ${i}\n\n`);
    held.add(events[0] as string);
    // Written before the second event exists: the first token is not delayed.
    expect(writes).toEqual([events[0]]);
    for (const e of events.slice(1)) held.add(e);
    held.flush();
    expect(writes.length).toBe(4);
    expect(writes.slice(1).map((w) => w.split('\n\n').length - 1)).toEqual([4, 4, 2]);
    expect(writes.join('')).toBe(events.join(''));
  });

  it("writes all of the first token's events at once when it has several (a chat's role chunk and first piece)", () => {
    const writes: string[] = [];
    const held = new HeldEvents({ events: 4, maxHoldMs: 1000 }, (chunk) => writes.push(chunk), 2);
    held.add('role');
    held.add('piece1');
    expect(writes).toEqual(['role', 'piece1']);
    held.add('piece2');
    expect(writes).toEqual(['role', 'piece1']);
    held.discard();
  });

  it('the hold time writes a group that does not fill', () => {
    vi.useFakeTimers();
    const { held, writes } = recorder(8, 50);
    held.add('1');
    held.add('2');
    held.add('3');
    expect(writes).toEqual(['1']);
    vi.advanceTimersByTime(49);
    expect(writes).toEqual(['1']);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(['1', '23']);
    held.add('4');
    vi.advanceTimersByTime(50);
    expect(writes).toEqual(['1', '23', '4']);
  });

  it('discard drops what waits and stops the timer (the client went away)', () => {
    vi.useFakeTimers();
    const { held, writes } = recorder(8, 50);
    held.add('1');
    held.add('2');
    held.discard();
    vi.advanceTimersByTime(1000);
    held.flush();
    expect(writes).toEqual(['1']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never holds more than MAX_HELD_CHARS, whatever the interval', () => {
    const { held, writes } = recorder(256);
    held.add('first');
    const big = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 20; i++) held.add(big);
    expect(writes.length).toBeGreaterThan(1);
    for (const w of writes) expect(w.length).toBeLessThanOrEqual(MAX_HELD_CHARS + big.length);
  });
});
