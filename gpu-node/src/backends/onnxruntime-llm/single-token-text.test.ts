import { describe, expect, it } from 'vitest';
import { rememberingSingleTokens } from './single-token-text.js';

describe('rememberingSingleTokens', () => {
  it('decodes a single token once and gives the same text after; longer runs always go through', () => {
    const calls: number[][] = [];
    const inner = { decode: (ids: readonly number[]) => (calls.push([...ids]), ids.map((i) => `<${i}>`).join('')) };
    const cached = rememberingSingleTokens(inner);
    expect(cached.decode([7])).toBe('<7>');
    expect(cached.decode([7])).toBe('<7>');
    expect(cached.decode([8])).toBe('<8>');
    expect(cached.decode([7, 8])).toBe('<7><8>');
    expect(cached.decode([7, 8])).toBe('<7><8>');
    expect(calls).toEqual([[7], [8], [7, 8], [7, 8]]);
  });
});
