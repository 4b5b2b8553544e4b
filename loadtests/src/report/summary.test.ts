import { describe, expect, it } from 'vitest';
import { BEGIN_MARKER, END_MARKER, cell, renderSummary, replaceGenerated, targetRows } from './summary.js';

describe('targetRows', () => {
  it('reads both target shapes', () => {
    expect(targetRows({ scenario: 'gateway', json: { targets: [{ name: 'added p50 < 0.5 ms', verdict: 'MISS', detail: 'd' }] } })).toEqual([
      { scenario: 'gateway', name: 'added p50 < 0.5 ms', verdict: 'MISS', detail: 'd' },
    ]);
    expect(targetRows({ scenario: 'batching', json: { targets: [{ name: 'batched >= 3x', pass: true, protocol: 'grpc', detail: 'x' }, null] } })).toEqual([
      { scenario: 'batching', name: 'batched >= 3x (grpc)', verdict: 'PASS', detail: 'x' },
    ]);
    expect(targetRows({ scenario: 'x', json: {} })).toEqual([]);
  });
});

describe('renderSummary', () => {
  it('tables the targets, lists missing scenarios and embeds the plots', () => {
    const md = renderSummary({
      date: '2026-11-22',
      scenarios: [{ scenario: 'soak', json: { machine: { cores: 2, cpuModel: 'cpu', memoryGiB: 8, node: 'v20' }, targets: [{ name: 'a | b', verdict: 'PASS', detail: 'line\nbreak' }] } }],
      plots: ['plots/soak-rss.svg'],
      resultsLink: '.',
      suite: { steps: [{ name: 'soak', status: 'ok', elapsedS: 30 }], budgetMinutes: 3, elapsedS: 150, soakMinutes: 0.5, quick: true },
    });
    expect(md).toContain('| soak | a \\| b | ✅ PASS | line break |');
    expect(md).toContain('### Targets (1 PASS, 0 MISS, 0 N/A)');
    expect(md).toContain('Not in this folder: batching, gateway, cache-ratio, node-kill, redis-stop.');
    expect(md).toContain('![soak-rss](plots/soak-rss.svg)');
    expect(md).toContain('2.5 of 3 budgeted minutes; soak 0.50 min');
    expect(md).toContain('2 cores (cpu)');
  });
});

describe('replaceGenerated', () => {
  it('creates the doc with an intro', () => {
    const doc = replaceGenerated(undefined, 'TABLE');
    expect(doc.startsWith('# Benchmarks')).toBe(true);
    expect(doc.endsWith(`${BEGIN_MARKER}\nTABLE\n${END_MARKER}\n`)).toBe(true);
  });

  it('replaces only between the markers', () => {
    const before = `# Mine\nhand text\n${BEGIN_MARKER}\nold\n${END_MARKER}\nafter\n`;
    expect(replaceGenerated(before, 'new')).toBe(`# Mine\nhand text\n${BEGIN_MARKER}\nnew\n${END_MARKER}\nafter\n`);
  });

  it('appends the section to a doc without markers', () => {
    expect(replaceGenerated('# Mine\n', 'new')).toBe(`# Mine\n\n${BEGIN_MARKER}\nnew\n${END_MARKER}\n`);
  });

  it('escapes table cells', () => {
    expect(cell('a|b\n c')).toBe('a\\|b c');
  });
});
