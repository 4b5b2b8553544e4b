import { describe, expect, it } from 'vitest';
import { extractSuiteArgs } from './suite-options.js';

describe('extractSuiteArgs', () => {
  it('runs the suite when no scenario is named', () => {
    expect(extractSuiteArgs([])).toEqual({ kind: 'ok', argv: ['suite'], extras: {} });
    expect(extractSuiteArgs(['--quick', '--out', '/tmp/r'])).toEqual({ kind: 'ok', argv: ['suite', '--quick', '--out', '/tmp/r'], extras: {} });
  });

  it('leaves a named scenario and the shared flags alone', () => {
    expect(extractSuiteArgs(['batching', '--duration', '3'])).toEqual({ kind: 'ok', argv: ['batching', '--duration', '3'], extras: {} });
  });

  it('takes out its own flags, in both spellings', () => {
    expect(extractSuiteArgs(['soak', '--soak-minutes', '10', '--quick'])).toEqual({ kind: 'ok', argv: ['soak', '--quick'], extras: { soakMinutes: 10 } });
    expect(extractSuiteArgs(['--budget-minutes=4.5', '--warmup', '1'])).toEqual({
      kind: 'ok',
      argv: ['suite', '--warmup', '1'],
      extras: { budgetMinutes: 4.5 },
    });
  });

  it('refuses a budget that is not a positive number', () => {
    expect(extractSuiteArgs(['--budget-minutes', 'x'])).toMatchObject({ kind: 'error' });
    expect(extractSuiteArgs(['--soak-minutes=0'])).toMatchObject({ kind: 'error' });
  });

  it('does not add a scenario to a help request', () => {
    expect(extractSuiteArgs(['--help'])).toEqual({ kind: 'ok', argv: ['--help'], extras: {} });
  });
});
