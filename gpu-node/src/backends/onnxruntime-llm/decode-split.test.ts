import { describe, expect, it } from 'vitest';
import { parseDecodeRunRows, subRunRanges } from './decode-split.js';

describe('subRunRanges', () => {
  it('covers every row once, in balanced runs of at most maxRows', () => {
    expect(subRunRanges(31, 16)).toEqual([[0, 15], [15, 31]]);
    expect(subRunRanges(33, 16)).toEqual([[0, 11], [11, 22], [22, 33]]);
    expect(subRunRanges(5, 2)).toEqual([[0, 1], [1, 3], [3, 5]]);
    expect(subRunRanges(3, 8)).toEqual([[0, 3]]);
  });

  it('0 means one run over the whole bucket', () => {
    expect(subRunRanges(32, 0)).toEqual([[0, 32]]);
  });
});

describe('parseDecodeRunRows', () => {
  it('names the parameter and the bad value', () => {
    expect(parseDecodeRunRows('m', undefined, 0)).toBe(0);
    expect(parseDecodeRunRows('m', '16', 0)).toBe(16);
    expect(() => parseDecodeRunRows('m', '-1', 0)).toThrow(/'decode_run_rows' must be an integer >= 0.*'-1'/);
    expect(() => parseDecodeRunRows('m', '2.5', 0)).toThrow(/decode_run_rows/);
  });
});
