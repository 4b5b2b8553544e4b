import { describe, expect, it } from 'vitest';
import { createRedactor } from './redact-fields.js';

const redact = createRedactor(['authorization', 'x-api-key', 'key'], '[R]');

describe('createRedactor', () => {
  it('returns the very same object when there is nothing to censor', () => {
    const fields = { requestId: 'r', status: 200, nested: { accept: 'json' }, list: [{ key: 'not looked at' }] };
    expect(redact(fields)).toBe(fields);
  });

  it('censors top-level and one-level-down fields in a copy, leaving the caller objects alone', () => {
    const headers = { authorization: 'Bearer s', accept: 'json' };
    const fields = { key: 's', headers, deeper: { inner: { key: 's' } }, ok: 1 };
    const out = redact(fields);
    expect(out).toEqual({ key: '[R]', headers: { authorization: '[R]', accept: 'json' }, deeper: { inner: { key: 's' } }, ok: 1 });
    expect(fields.key).toBe('s');
    expect(headers.authorization).toBe('Bearer s');
    expect(out.deeper).toBe(fields.deeper);
  });

  it('censors whatever the value is', () => {
    expect(redact({ 'x-api-key': undefined, key: { a: 1 } })).toEqual({ 'x-api-key': '[R]', key: '[R]' });
  });
});
