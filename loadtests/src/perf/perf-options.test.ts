import { describe, expect, it } from 'vitest';
import { parsePerfArgs, parseRange, type PerfOptions } from './perf-options.js';

const ok = (argv: string[]): PerfOptions => {
  const parsed = parsePerfArgs(argv);
  if (parsed.kind !== 'options') throw new Error(`expected options, got ${JSON.stringify(parsed)}`);
  return parsed.options;
};
const error = (argv: string[]): string => {
  const parsed = parsePerfArgs(argv);
  if (parsed.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
};

describe('parsePerfArgs', () => {
  it('applies perf_analyzer-like defaults', () => {
    const o = ok(['-m', 'simple']);
    expect(o).toMatchObject({
      model: 'simple',
      host: 'localhost',
      port: 8000,
      protocol: 'http',
      json: false,
      sweep: { mode: 'concurrency', values: [1] },
      inputData: { kind: 'random' },
      measurementIntervalMs: 5000,
      stabilityPercentage: 10,
      maxTrials: 10,
      apiKeys: [],
    });
    expect(ok(['-m', 's', '-i', 'grpc']).port).toBe(8001);
  });

  it('reads a full command line', () => {
    const o = ok([
      '-m', 'mlp', '-u', 'http://gw:9000/', '-i', 'http', '--json', '--request-rate-range', '10:30:10',
      '--request-distribution', 'poisson', '--input-data', 'data.json', '--shape', 'INPUT0:2,16', '--api-key', 'premium=tsk_a',
      '--api-key', 'free=tsk_b', '--api-key-header', 'x-api-key', '--stats-url', 'http://node:8000/', '-f', 'o.csv',
      '--json-out', 'o.json', '--plot-dir', 'plots', '--measurement-interval', '500', '--latency-slo', '50',
    ]);
    expect(o).toMatchObject({
      host: 'gw',
      port: 9000,
      json: true,
      sweep: { mode: 'rate', values: [10, 20, 30], distribution: 'poisson' },
      inputData: { kind: 'file', path: 'data.json' },
      shapes: { INPUT0: [2, 16] },
      apiKeys: [{ tier: 'premium', key: 'tsk_a' }, { tier: 'free', key: 'tsk_b' }],
      apiKeyHeader: 'x-api-key',
      statsUrl: 'http://node:8000',
      csvPath: 'o.csv',
      jsonPath: 'o.json',
      plotDir: 'plots',
      measurementIntervalMs: 500,
      latencySloMs: 50,
    });
  });

  it('rejects bad and conflicting flags with a message naming the flag', () => {
    expect(error([])).toContain('-m MODEL');
    expect(error(['-m', 's', '--bogus'])).toContain('bogus');
    expect(error(['-m', 's', '-i', 'udp'])).toContain('-i');
    expect(error(['-m', 's', '--binary', '--json'])).toContain('exclude');
    expect(error(['-m', 's', '-i', 'grpc', '--json'])).toContain('HTTP only');
    expect(error(['-m', 's', '--concurrency-range', '1:4', '--request-rate-range', '5'])).toContain('exclude');
    expect(error(['-m', 's', '--concurrency-range', '4:1'])).toContain('below start');
    expect(error(['-m', 's', '--concurrency-range', '1.5'])).toContain('integers');
    expect(error(['-m', 's', '--request-distribution', 'poisson'])).toContain('needs --request-rate-range');
    expect(error(['-m', 's', '--request-rate-range', '5', '--request-distribution', 'uniform'])).toContain('constant or poisson');
    expect(error(['-m', 's', '--input-data', 'data.txt'])).toContain('--input-data');
    expect(error(['-m', 's', '--shape', 'INPUT0:0,3'])).toContain('--shape');
    expect(error(['-m', 's', '--max-trials', '2'])).toContain('>= 3');
    expect(error(['-m', 's', '--measurement-interval', '-1'])).toContain('--measurement-interval');
    expect(error(['-m', 's', '--api-key', 'a=x', '--api-key', 'a=y'])).toContain('TIER=');
    expect(error(['-m', 's', '-u', 'https://x:1'])).toContain('TLS');
    expect(error(['-m', 's', '-u', 'x:99999'])).toContain('port');
    expect(error(['-m', 's', '--stats-url', 'node:8000'])).toContain('--stats-url');
  });

  it('answers help', () => {
    expect(parsePerfArgs(['-h'])).toEqual({ kind: 'help' });
  });
});

describe('parseRange', () => {
  it('expands start:end:step inclusively', () => {
    expect(parseRange('1:8:2', 'f', true)).toEqual([1, 3, 5, 7]);
    expect(parseRange('4', 'f', true)).toEqual([4]);
    expect(parseRange('0.5:1.5:0.5', 'f', false)).toEqual([0.5, 1, 1.5]);
    expect(parseRange('1:100000', 'f', true)).toContain('more than');
    expect(parseRange('1::2', 'f', true)).toContain('start[:end[:step]]');
  });
});
