import { describe, expect, it } from 'vitest';
import type { LoadPoint } from '../load/load-point.js';
import { EXTRA_COLUMNS, PERF_ANALYZER_COLUMNS, toPerfCsv } from './perf-csv.js';

const point: LoadPoint = {
  model: 'mlp_large',
  protocol: 'grpc',
  setup: 'batched',
  concurrency: 64,
  inferencesPerSec: 1234.567,
  latency: { count: 100, minUs: 10, avgUs: 50_000, p50Us: 48_000.4, p90Us: 60_000, p95Us: 61_000, p99Us: 70_000, maxUs: 80_000 },
  clientSendUs: 100,
  clientRecvUs: 200,
  errors: 0,
  windowS: 8,
  server: {
    requests: 100,
    failures: 0,
    inferences: 100,
    executions: 4,
    avgBatchSize: 25,
    requestUs: 45_000,
    queueUs: 20_000,
    computeInputUs: 1_000,
    computeInferUs: 20_000,
    computeOutputUs: 500,
  },
};

describe('toPerfCsv', () => {
  it("writes perf_analyzer's header first, then ours", () => {
    const [header] = toPerfCsv([point]).split('\n');
    expect(header).toBe([...PERF_ANALYZER_COLUMNS, ...EXTRA_COLUMNS].join(','));
    expect(header?.startsWith('Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue')).toBe(true);
  });

  it('derives network and wait columns as perf_analyzer does', () => {
    const row = toPerfCsv([point]).split('\n')[1]?.split(',');
    // wait = 50000 - 300; network = wait - (20000 + 1000 + 20000 + 500)
    expect(row).toEqual([
      '64', '1234.57', '100', '8200', '20000', '1000', '20000', '500', '200',
      '48000', '60000', '61000', '70000', '50000', '300', '49700',
      'mlp_large', 'grpc', 'batched', '25.00', '0',
    ]);
  });

  it('writes unmeasured server figures as 0 and quotes fields that need it', () => {
    const idle: LoadPoint = {
      ...point,
      setup: 'a,b',
      server: { ...point.server, avgBatchSize: Number.NaN, queueUs: Number.NaN },
    };
    const row = toPerfCsv([idle]).split('\n')[1] ?? '';
    expect(row).toContain(',"a,b",,0');
    expect(row.split(',')[4]).toBe('0');
  });

  it("heads an open-loop sweep's first column 'Request Rate' and writes the offered rate there", () => {
    const [header, row] = toPerfCsv([{ ...point, requestRate: 12.5 }]).split('\n');
    expect(header?.startsWith('Request Rate,Inferences/Second,')).toBe(true);
    expect(row?.split(',')[0]).toBe('12.5');
  });
});
