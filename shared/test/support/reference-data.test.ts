import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { referenceData, sharedDataDir, SHARED_DIR_ENV } from './reference-data.js';

describe('reference data outside the repository', () => {
  it('is looked up under TESSERA_SHARED_DIR when set, else ../shared beside the checkout', () => {
    expect(sharedDataDir({ [SHARED_DIR_ENV]: '/data/tessera-shared' })).toBe('/data/tessera-shared');
    expect(path.basename(sharedDataDir({}))).toBe('shared');
  });

  it('when missing: present is false and one line says what is skipped and how to supply it', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const found = referenceData('reference/triton-wire-schema.md', 'the wire-schema check', { [SHARED_DIR_ENV]: '/nonexistent/tessera-shared' });
      expect(found).toEqual({ path: '/nonexistent/tessera-shared/reference/triton-wire-schema.md', present: false });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/^\[skip\] the wire-schema check: \/nonexistent\/tessera-shared\/reference\/triton-wire-schema\.md is missing \(set TESSERA_SHARED_DIR/);
    } finally {
      warn.mockRestore();
    }
  });
});
