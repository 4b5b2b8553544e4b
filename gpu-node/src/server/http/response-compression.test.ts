import { describe, expect, it } from 'vitest';
import { negotiateResponseCoding } from './response-compression.js';
import { LogSettingsStore } from './settings-routes.js';
import { DEFAULT_LOG_SETTINGS, resolveLimits } from './server-options.js';

describe('negotiateResponseCoding', () => {
  it('follows Accept-Encoding, q-values and wildcards', () => {
    expect(negotiateResponseCoding(null)).toBeUndefined();
    expect(negotiateResponseCoding('identity')).toBeUndefined();
    expect(negotiateResponseCoding('gzip')).toBe('gzip');
    expect(negotiateResponseCoding('deflate')).toBe('deflate');
    expect(negotiateResponseCoding('deflate, gzip')).toBe('gzip');
    expect(negotiateResponseCoding('gzip;q=0.2, deflate;q=0.8')).toBe('deflate');
    expect(negotiateResponseCoding('gzip;q=0, deflate;q=0')).toBeUndefined();
    expect(negotiateResponseCoding('*')).toBe('gzip');
    expect(negotiateResponseCoding('*;q=0, deflate')).toBe('deflate');
    expect(negotiateResponseCoding(';;,q=,gzip;q=abc')).toBeUndefined();
  });
});

describe('LogSettingsStore', () => {
  it('treats null as "unchanged" but still rejects unknown keys, leaving settings untouched on error', () => {
    const seen: unknown[] = [];
    const store = new LogSettingsStore(DEFAULT_LOG_SETTINGS, (s) => seen.push(s));
    expect(store.update({ log_info: null, log_file: null, log_verbose_level: 3 })).toMatchObject({ log_verbose_level: 3, log_info: true });
    expect(() => store.update({ log_verbose_level: 1, bogus: null })).toThrow(/'bogus'/);
    expect(() => store.update({ log_verbose_level: -1 })).toThrow(/non-negative/);
    expect(store.current.log_verbose_level).toBe(3);
    expect(seen).toHaveLength(1);
  });
});

describe('resolveLimits', () => {
  it('defaults to Triton (64 MiB JSON) and never lets the body limit undercut the JSON limit', () => {
    expect(resolveLimits({})).toEqual({ maxInputSize: 2 ** 26, maxBodySize: 2 ** 30 });
    expect(resolveLimits({ maxInputSize: 100, maxBodySize: 10 })).toEqual({ maxInputSize: 100, maxBodySize: 100 });
    expect(() => resolveLimits({ maxInputSize: 0 })).toThrow(RangeError);
  });
});
