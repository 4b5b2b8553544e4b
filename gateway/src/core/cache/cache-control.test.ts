import { describe, expect, it } from 'vitest';
import { parseCacheControl } from './cache-control.js';

describe('parseCacheControl', () => {
  it.each([
    [undefined, 'default'],
    [null, 'default'],
    ['', 'default'],
    ['max-age=60', 'default'],
    ['no-cache', 'no-cache'],
    ['No-Cache', 'no-cache'],
    ['max-age=0', 'no-cache'],
    ['max-age="0"', 'no-cache'],
    ['no-store', 'no-store'],
    ['no-cache, no-store', 'no-store'],
    [' private ,  NO-STORE ', 'no-store'],
    ['no-cache="set-cookie"', 'no-cache'],
    ['nonsense,,=,', 'default'],
  ] as const)('%j → %s', (header, expected) => {
    expect(parseCacheControl(header)).toBe(expected);
  });

  it('honours Pragma: no-cache only without a Cache-Control header', () => {
    expect(parseCacheControl(null, 'no-cache')).toBe('no-cache');
    expect(parseCacheControl(undefined, 'foo')).toBe('default');
    expect(parseCacheControl('max-age=60', 'no-cache')).toBe('default');
  });
});
