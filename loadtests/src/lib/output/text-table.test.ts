import { describe, expect, it } from 'vitest';
import { formatTable } from './text-table.js';

describe('formatTable', () => {
  it('pads text left-aligned and numbers right-aligned', () => {
    const text = formatTable(['name', 'inf/s'], [['grpc', '12.5'], ['http/batched', '1234.0']]);
    expect(text.split('\n')).toEqual([
      'name           inf/s',
      '------------  ------',
      'grpc            12.5',
      'http/batched  1234.0',
    ]);
  });
});
