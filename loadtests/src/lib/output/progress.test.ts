import { describe, expect, it } from 'vitest';
import { createProgress, isInteractive, progressBar } from './progress.js';

describe('progress', () => {
  it('draws a bar of the fraction', () => {
    expect(progressBar(0.5, 10)).toBe('[#####-----]  50%');
    expect(progressBar(2, 4)).toBe('[####] 100%');
    expect(progressBar(Number.NaN, 4)).toBe('[----]   0%');
  });

  it('prints plain lines, one per new status, when not on a terminal', () => {
    const out: string[] = [];
    const p = createProgress({ interactive: false, write: (t) => void out.push(t) });
    p.update(0.1, 'c=1 trial 1');
    p.update(0.1, 'c=1 trial 1');
    p.line('c=1: 100 inf/s');
    p.done();
    expect(out).toEqual(['[ 10%] c=1 trial 1\n', 'c=1: 100 inf/s\n']);
    expect(out.join('')).not.toContain('\r');
  });

  it('is interactive only on a TTY outside CI', () => {
    expect(isInteractive({ isTTY: true }, {})).toBe(true);
    expect(isInteractive({ isTTY: true }, { CI: 'true' })).toBe(false);
    expect(isInteractive({ isTTY: false }, {})).toBe(false);
  });
});
