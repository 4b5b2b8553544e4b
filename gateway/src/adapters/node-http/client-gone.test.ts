import { describe, expect, it } from 'vitest';
import { ClientGone } from './client-gone.js';

describe('ClientGone (a CancelSignal without an AbortController)', () => {
  it('runs each listener once, in order, on the first abort; later aborts do nothing', () => {
    const gone = new ClientGone();
    const seen: string[] = [];
    gone.addEventListener('abort', () => seen.push('a'));
    gone.addEventListener('abort', () => seen.push('b'));
    expect(gone.aborted).toBe(false);
    gone.abort();
    gone.abort();
    expect(seen).toEqual(['a', 'b']);
    expect(gone.aborted).toBe(true);
    expect(gone.reason).toBeInstanceOf(Error);
  });

  it('a removed listener never runs; one added after the abort never runs (as with an AbortSignal)', () => {
    const gone = new ClientGone();
    const seen: string[] = [];
    const removed = (): void => void seen.push('removed');
    gone.addEventListener('abort', removed);
    gone.removeEventListener('abort', removed);
    gone.abort();
    gone.addEventListener('abort', () => seen.push('late'));
    expect(seen).toEqual([]);
  });

  it('a listener that throws does not keep the others from running; its error comes after them', () => {
    const gone = new ClientGone();
    const seen: string[] = [];
    gone.addEventListener('abort', () => {
      throw new Error('listener broke');
    });
    gone.addEventListener('abort', () => seen.push('after'));
    expect(() => gone.abort()).toThrow('listener broke');
    expect(seen).toEqual(['after']);
  });
});
