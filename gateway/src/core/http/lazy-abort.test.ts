import { describe, expect, it } from 'vitest';
import { LazyAbort } from './lazy-abort.js';

describe('LazyAbort', () => {
  it('makes no signal until one is asked for, and answers `aborted` without one', () => {
    const cancel = new LazyAbort();
    expect(cancel.aborted).toBe(false);
    expect(cancel.signalMade).toBe(false);
    cancel.abort();
    expect(cancel.aborted).toBe(true);
    expect(cancel.signalMade).toBe(false);
  });

  it('gives a signal made after the abort already aborted', () => {
    const cancel = new LazyAbort();
    cancel.abort();
    expect(cancel.signal.aborted).toBe(true);
  });

  it('aborts a signal made before, once, and gives the same signal each time', () => {
    const cancel = new LazyAbort();
    const signal = cancel.signal;
    let events = 0;
    signal.addEventListener('abort', () => events++);
    expect(cancel.signal).toBe(signal);
    cancel.abort();
    cancel.abort();
    expect([signal.aborted, events]).toEqual([true, 1]);
  });
});
