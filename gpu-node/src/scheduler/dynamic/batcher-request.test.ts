import { describe, expect, it } from 'vitest';
import { SignatureMemo, batchSignature, type InputShape } from './batcher-request.js';

const one = (name: string, ...shape: number[]): InputShape[] => [{ name, shape }];

describe('SignatureMemo', () => {
  it('keys every request as batchSignature does, over repeats and every kind of change', () => {
    const ragged = new Set(['r']);
    const run: InputShape[][] = [
      one('x', 1, 1024),
      one('x', 1, 1024),
      one('x', 7, 1024), // another batch size: the same key
      one('x', 1, 1023),
      one('x', 1, 1024, 1),
      one('y', 1, 1024),
      one('r', 1, 5),
      one('r', 1, 6), // ragged: the same key
      [{ name: 'x', shape: [1, 4] }, { name: 'y', shape: [1, 2] }],
      [{ name: 'y', shape: [1, 2] }, { name: 'x', shape: [1, 4] }],
      one('x', 1, 1024),
    ];
    for (const hasBatchDim of [true, false]) {
      const memo = new SignatureMemo(ragged, hasBatchDim);
      for (const [i, inputs] of run.entries()) expect(memo.of(inputs), `request ${i}`).toBe(batchSignature(inputs, ragged, hasBatchDim));
    }
  });

  it('does not take a shape array changed after it was keyed for the one it remembered', () => {
    const memo = new SignatureMemo(new Set(), true);
    const shape = [1, 4];
    const before = memo.of([{ name: 'x', shape }]);
    shape[1] = 8;
    expect(memo.of([{ name: 'x', shape }])).not.toBe(before);
    expect(memo.of([{ name: 'x', shape }])).toBe(batchSignature([{ name: 'x', shape }], new Set(), true));
  });
});
