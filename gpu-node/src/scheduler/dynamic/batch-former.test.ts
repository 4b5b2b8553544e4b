import { describe, expect, it } from 'vitest';
import { formBatch, batchFormingSettings } from './batch-former.js';
import type { FormerEntry } from './batch-former.js';
import { batcherOptions } from './batcher-options.js';

const e = (batchSize: number, enqueuedUs = 0, signature = 's'): FormerEntry => ({ batchSize, enqueuedUs, signature });
const settings = (maxBatchSize: number, preferredBatchSizes: number[] = [], maxQueueDelayUs = 0) =>
  batchFormingSettings(batcherOptions({ maxBatchSize, preferredBatchSizes, maxQueueDelayUs }));

describe('formBatch', () => {
  it('does nothing on an empty queue', () => {
    expect(formBatch([], 0, settings(8))).toEqual({ kind: 'none' });
  });

  it('takes the largest preferred size reachable now', () => {
    const s = settings(8, [2, 4, 6], 1000);
    expect(formBatch([e(1), e(1), e(1), e(1), e(1)], 0, s)).toEqual({ kind: 'run', count: 4, size: 4 });
    expect(formBatch([e(1), e(1), e(1), e(1), e(1), e(1), e(1)], 0, s)).toEqual({ kind: 'run', count: 6, size: 6 });
  });

  it('waits for a preferred size until the queue delay of the oldest request expires', () => {
    const s = settings(8, [4], 1000);
    expect(formBatch([e(1, 100), e(1, 50), e(1, 300)], 500, s)).toEqual({ kind: 'wait', untilUs: 1050 });
    expect(formBatch([e(1, 100), e(1, 50), e(1, 300)], 1050, s)).toEqual({ kind: 'run', count: 3, size: 3 });
  });

  it('after the delay, sends everything pending up to max_batch_size, beyond the preferred sizes', () => {
    const s = settings(8, [2], 100);
    const queue = Array.from({ length: 10 }, () => e(1));
    expect(formBatch(queue, 50, s)).toEqual({ kind: 'run', count: 2, size: 2 });
    expect(formBatch(queue, 100, s)).toEqual({ kind: 'run', count: 8, size: 8 });
  });

  it('sends the largest batch under the largest preferred size when no preferred size can be hit', () => {
    // Sizes 2,2,2 never sum to 3: Triton marks the batch before passing 3 and runs it at once.
    expect(formBatch([e(2), e(2), e(2)], 0, settings(8, [3], 1000))).toEqual({ kind: 'run', count: 1, size: 2 });
  });

  it('with delay 0 takes what fits right now', () => {
    expect(formBatch([e(1), e(1), e(1)], 0, settings(8))).toEqual({ kind: 'run', count: 3, size: 3 });
    expect(formBatch([e(3), e(3), e(3)], 0, settings(8))).toEqual({ kind: 'run', count: 2, size: 6 });
  });

  it('sends at once when the next request would exceed max_batch_size', () => {
    expect(formBatch([e(3), e(6)], 0, settings(8, [8], 1000))).toEqual({ kind: 'run', count: 1, size: 3 });
  });

  it('stops at a shape change without skipping ahead', () => {
    const queue = [e(1, 0, 'a'), e(1, 0, 'a'), e(1, 0, 'b'), e(1, 0, 'a')];
    expect(formBatch(queue, 0, settings(8, [8], 1000))).toEqual({ kind: 'run', count: 2, size: 2 });
  });

  it('treats max_batch_size 0 as batches of one request', () => {
    expect(formBatch([e(1), e(1)], 0, settings(0))).toEqual({ kind: 'run', count: 1, size: 1 });
  });
});
