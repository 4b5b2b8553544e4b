import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from './bench-options.js';

describe('parseBenchArgs', () => {
  it('takes defaults, or quick ones', () => {
    expect(parseBenchArgs(['batching'])).toEqual({
      kind: 'options',
      options: { scenario: 'batching', warmupS: 2, durationS: 8, quick: false },
    });
    const quick = parseBenchArgs(['batching', '--quick']);
    expect(quick).toMatchObject({ kind: 'options', options: { warmupS: 0.5, durationS: 1.5, quick: true } });
  });

  it('reads flags', () => {
    expect(parseBenchArgs(['batching', '--duration', '3', '--warmup=1', '--concurrency', '1, 64', '--out', '/tmp/r'])).toEqual({
      kind: 'options',
      options: { scenario: 'batching', warmupS: 1, durationS: 3, quick: false, concurrencies: [1, 64], outRoot: '/tmp/r' },
    });
  });

  it('reads --per-core (gateway)', () => {
    expect(parseBenchArgs(['gateway', '--per-core'])).toMatchObject({ kind: 'options', options: { scenario: 'gateway', perCore: true } });
    expect(parseBenchArgs(['gateway'])).not.toMatchObject({ options: { perCore: true } });
  });

  it('refuses bad input', () => {
    expect(parseBenchArgs([]).kind).toBe('error');
    expect(parseBenchArgs(['a', 'b']).kind).toBe('error');
    expect(parseBenchArgs(['batching', '--duration', '0']).kind).toBe('error');
    expect(parseBenchArgs(['batching', '--concurrency', '1,x']).kind).toBe('error');
    expect(parseBenchArgs(['batching', '--bogus']).kind).toBe('error');
    expect(parseBenchArgs(['--help'])).toEqual({ kind: 'help' });
  });
});
