import { describe, expect, it } from 'vitest';
import { isTesseraError } from '../errors/index.js';
import { LOAD_REPORT_VERSION, isStale, parseLoadReport, supersedes } from './load-report.js';
import type { LoadReport } from './load-report.js';

const valid: LoadReport = {
  version: LOAD_REPORT_VERSION,
  nodeId: 'gpu-1',
  httpAddress: '10.0.0.5:8000',
  grpcAddress: '[::1]:8001',
  startedAt: 1_700_000_000_000,
  sentAt: 1_700_000_005_000,
  seq: 6,
  ttlMs: 3000,
  models: [
    { name: 'resnet50', versions: ['1', '2'], queued: 3, inflight: 8, capacity: 16, execTimeEmaMs: 4.5 },
    { name: 'bert', versions: ['7'], queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null },
  ],
  draining: false,
};

/** `valid` with one field replaced (or removed when `value` is undefined). */
function mutate(path: (string | number)[], value: unknown): string {
  const doc = structuredClone(valid) as unknown as Record<string | number, unknown>;
  let target = doc;
  for (const step of path.slice(0, -1)) target = target[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return JSON.stringify(doc);
}

describe('parseLoadReport', () => {
  it('accepts a well-formed report and keeps only known fields', () => {
    const parsed = parseLoadReport(JSON.stringify({ ...valid, futureField: 1 }));
    expect(parsed).toEqual(valid);
    expect('futureField' in parsed).toBe(false);
  });

  it('keeps an LLM HTTP/2 address when present; a report without one (an older node) parses without it', () => {
    expect(parseLoadReport(JSON.stringify({ ...valid, llmH2Address: '10.0.0.5:8003' })).llmH2Address).toBe('10.0.0.5:8003');
    expect('llmH2Address' in parseLoadReport(JSON.stringify(valid))).toBe(false);
    expect(() => parseLoadReport(JSON.stringify({ ...valid, llmH2Address: 'evil host:1' }))).toThrow(/llmH2Address must be null or an address/);
    expect(() => parseLoadReport(JSON.stringify({ ...valid, llmH2Address: 'host:70000' }))).toThrow(/llmH2Address must be null or an address/);
  });

  it.each([
    ['not JSON', '{nope', /the document must be valid JSON/],
    ['an array', '[]', /the report must be an object/],
    ['an unknown version', mutate(['version'], 2), /version must be one of 1 \(got 2\)/],
    ['a missing nodeId', mutate(['nodeId'], undefined), /nodeId must be .* \(got nothing\)/],
    ['a nodeId with a glob', mutate(['nodeId'], 'a*'), /nodeId must be/],
    ['an address without port', mutate(['httpAddress'], 'host'), /httpAddress must be null or an address/],
    ['port 0', mutate(['grpcAddress'], 'host:0'), /grpcAddress must be null or an address/],
    ['no address at all', JSON.stringify({ ...valid, httpAddress: null, grpcAddress: null }), /httpAddress must be set/],
    ['a negative sentAt', mutate(['sentAt'], -1), /sentAt must be a non-negative integer \(got -1\)/],
    ['seq 0', mutate(['seq'], 0), /seq must be an integer >= 1 \(got 0\)/],
    ['a string ttlMs', mutate(['ttlMs'], '3000'), /ttlMs must be an integer >= 1 \(got "3000"\)/],
    ['models not an array', mutate(['models'], {}), /models must be an array \(got an object\)/],
    ['a negative queue', mutate(['models', 0, 'queued'], -1), /models\[0\]\.queued must be a non-negative integer/],
    ['a fractional inflight', mutate(['models', 1, 'inflight'], 1.5), /models\[1\]\.inflight must be a non-negative integer/],
    ['capacity 0', mutate(['models', 0, 'capacity'], 0), /models\[0\]\.capacity must be an integer >= 1/],
    ['a NaN-ish EMA', mutate(['models', 0, 'execTimeEmaMs'], 'fast'), /execTimeEmaMs must be a finite non-negative number/],
    ['no READY version', mutate(['models', 0, 'versions'], []), /models\[0\]\.versions must be a non-empty array/],
    ['a non-numeric version', mutate(['models', 0, 'versions', 1], 'latest'), /models\[0\]\.versions\[1\] must be a decimal version string/],
    ['an empty model name', mutate(['models', 1, 'name'], ''), /models\[1\]\.name must be a model name/],
    ['a duplicated model', mutate(['models', 1, 'name'], 'resnet50'), /models\[1\]\.name must be unique/],
    ['a string draining', mutate(['draining'], 'no'), /draining must be a boolean/],
  ])('rejects %s with a clear INVALID_ARG error', (_, json, expected) => {
    let caught: unknown;
    try {
      parseLoadReport(json);
    } catch (error) {
      caught = error;
    }
    expect(isTesseraError(caught) && caught.code).toBe('INVALID_ARG');
    expect((caught as Error).message).toMatch(/^malformed load report: /);
    expect((caught as Error).message).toMatch(expected);
  });

  it('refuses oversized documents before parsing them', () => {
    expect(() => parseLoadReport(' '.repeat((1 << 20) + 1))).toThrow(/at most 1048576 characters/);
  });
});

describe('isStale', () => {
  const report = { sentAt: 10_000, ttlMs: 3000 };
  it('is fresh up to ttlMs after sentAt, stale after', () => {
    expect(isStale(report, 10_000)).toBe(false);
    expect(isStale(report, 13_000)).toBe(false);
    expect(isStale(report, 13_001)).toBe(true);
  });
  it('treats a report dated more than ttlMs in the future as stale (clock skew)', () => {
    expect(isStale(report, 7000)).toBe(false);
    expect(isStale(report, 6999)).toBe(true);
  });
});

describe('supersedes', () => {
  it('orders by process start, then by seq', () => {
    expect(supersedes({ startedAt: 1, seq: 5 }, { startedAt: 1, seq: 4 })).toBe(true);
    expect(supersedes({ startedAt: 1, seq: 4 }, { startedAt: 1, seq: 4 })).toBe(false);
    expect(supersedes({ startedAt: 1, seq: 3 }, { startedAt: 1, seq: 4 })).toBe(false);
    expect(supersedes({ startedAt: 2, seq: 1 }, { startedAt: 1, seq: 99 })).toBe(true);
  });
});
