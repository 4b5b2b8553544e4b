import { describe, expect, it } from 'vitest';
import { normalizeRoutingConfig, selectVersion } from './version-splits.js';

const routing = normalizeRoutingConfig({
  models: { m: { splits: [{ version: '1', weight: 90 }, { version: '2', weight: 10 }], stickyHeader: 'X-Session' } },
}).models!.m!;
const all = () => true;

describe('version splits', () => {
  it('splits random traffic by weight', () => {
    expect(selectVersion('m', routing, undefined, all, () => 0)).toBe('1');
    expect(selectVersion('m', routing, undefined, all, () => 0.899)).toBe('1');
    expect(selectVersion('m', routing, undefined, all, () => 0.9)).toBe('2');
    let draws = 0;
    const seq = () => (draws++ % 100) / 100;
    const counts = { '1': 0, '2': 0 } as Record<string, number>;
    for (let i = 0; i < 1000; i++) counts[selectVersion('m', routing, undefined, all, seq)!]!++;
    expect(counts).toEqual({ '1': 900, '2': 100 });
  });

  it('sends one sticky value to one version, deterministically, and spreads values by weight', () => {
    const first = selectVersion('m', routing, 'session-42', all, () => 0.99);
    for (let i = 0; i < 5; i++) expect(selectVersion('m', routing, 'session-42', all, Math.random)).toBe(first);
    const counts = { '1': 0, '2': 0 } as Record<string, number>;
    for (let i = 0; i < 2000; i++) counts[selectVersion('m', routing, `s-${i}`, all)!]!++;
    expect(counts['2']).toBeGreaterThan(100);
    expect(counts['2']).toBeLessThan(320);
  });

  it('skips versions no node serves, and leaves the choice to the node without a split', () => {
    expect(selectVersion('m', routing, undefined, (v) => v === '2', () => 0)).toBe('2');
    expect(selectVersion('m', routing, undefined, () => false, () => 0)).toBeUndefined();
    expect(selectVersion('m', undefined, 'x', all)).toBeUndefined();
  });

  it('lower-cases the sticky header and refuses bad configs naming the field', () => {
    expect(routing.stickyHeader).toBe('x-session');
    expect(() => normalizeRoutingConfig({ models: { m: { splits: [{ version: 'v1', weight: 1 }] } } })).toThrow(
      /models\.m\.splits\[0\]\.version must be a decimal version string/,
    );
    expect(() => normalizeRoutingConfig({ models: { m: { splits: [{ version: '1', weight: 0 }] } } })).toThrow(/weight must be a number > 0/);
    expect(() => normalizeRoutingConfig({ models: { m: { splits: [{ version: '1', weight: 1 }, { version: '1', weight: 2 }] } } })).toThrow(
      /lists version 1 twice/,
    );
    expect(() => normalizeRoutingConfig({ policy: 'random' as never })).toThrow(/policy must be one of p2c, round-robin/);
  });
});
