import { describe, expect, it } from 'vitest';
import { batchSignature, BatchSignatures, type InputShape } from './batcher-request.js';

const one = (name: string, shape: number[]): InputShape[] => [{ name, shape }];

describe('BatchSignatures', () => {
  it('gives batchSignature’s key for every request of a changing sequence', () => {
    const ragged = new Set(['r']);
    const sequence: InputShape[][] = [
      one('x', [1, 1024]),
      one('x', [8, 1024]), // another batch size: same key
      one('x', [1, 512]), // another shape: a new key
      one('y', [1, 512]), // another name: a new key
      one('x', [1, 1024]),
      one('x', [1, 1024, 2]), // more dimensions
      one('x', [1]),
      one('r', [1, 7]), // ragged: its shape does not count
      one('r', [1, 9]),
      [
        { name: 'b', shape: [1, 2] },
        { name: 'a', shape: [1, 3] },
      ],
      one('x', [1, 1024]),
    ];
    for (const hasBatchDim of [true, false]) {
      const signatures = new BatchSignatures(ragged, hasBatchDim);
      for (const inputs of sequence) expect(signatures.of(inputs)).toBe(batchSignature(inputs, ragged, hasBatchDim));
    }
  });

  it('tells shapes apart in the batch dimension when the model has none', () => {
    const signatures = new BatchSignatures(new Set(), false);
    expect(signatures.of(one('x', [2, 4]))).toBe('x:2,4');
    expect(signatures.of(one('x', [3, 4]))).toBe('x:3,4');
  });

  it('holds a copy of the shape, so a request changing its array later does not change the next key', () => {
    const signatures = new BatchSignatures(new Set(), true);
    const shape = [1, 4];
    expect(signatures.of([{ name: 'x', shape }])).toBe('x:4');
    shape[1] = 5;
    expect(signatures.of(one('x', [1, 4]))).toBe('x:4');
    expect(signatures.of(one('x', [1, 5]))).toBe('x:5');
  });
});
