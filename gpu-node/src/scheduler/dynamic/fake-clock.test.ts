import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';

describe('FakeClock', () => {
  it('fires due timers in due order (ties in setting order) at their due time, including ones set while firing', async () => {
    const clock = new FakeClock(100);
    const fired: [string, number][] = [];
    clock.setTimer(() => fired.push(['b', clock.now()]), 20);
    clock.setTimer(() => {
      fired.push(['a', clock.now()]);
      clock.setTimer(() => fired.push(['c', clock.now()]), 5);
    }, 10);
    clock.setTimer(() => fired.push(['b2', clock.now()]), 20);
    const cancel = clock.setTimer(() => fired.push(['x', clock.now()]), 15);
    cancel();
    await clock.advance(19);
    expect(fired).toEqual([
      ['a', 110],
      ['c', 115],
    ]);
    await clock.advance(1);
    expect(fired.slice(2)).toEqual([
      ['b', 120],
      ['b2', 120],
    ]);
    expect(clock.now()).toBe(120);
    expect(clock.pendingTimers()).toBe(0);
  });
});
