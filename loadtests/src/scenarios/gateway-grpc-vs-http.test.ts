import { describe, expect, it } from 'vitest';
import { grpcVsHttpTable, measuredWindow, type GrpcVsHttpSample } from './gateway-grpc-vs-http.js';

const sample = (round: number, protocol: 'HTTP' | 'gRPC', netCpuUs: number, extra: Partial<GrpcVsHttpSample> = {}): GrpcVsHttpSample => ({
  side: 'gateway',
  round,
  point: 'hit sat',
  protocol,
  netCpuUs,
  mainThreadUs: netCpuUs,
  perSec: 1000,
  errors: 0,
  dropped: 0,
  ...extra,
});

describe('gateway-grpc-vs-http table', () => {
  it('pairs the protocols round by round and takes the median of the ratios', () => {
    const table = grpcVsHttpTable([sample(0, 'HTTP', 100), sample(0, 'gRPC', 150), sample(1, 'HTTP', 200), sample(1, 'gRPC', 100), sample(2, 'HTTP', 100), sample(2, 'gRPC', 120)]);
    expect(table).toContain('| gateway | hit sat | 100 | 120 | **1.20** (1.50, 0.50, 1.20) | 0 |');
  });

  it('leaves out a stalled window and its round pair', () => {
    const stalled = sample(1, 'gRPC', -700, { dropped: 400 });
    expect(measuredWindow(stalled)).toBe(false);
    expect(measuredWindow(sample(1, 'HTTP', 50, { errors: 3 }))).toBe(false);
    expect(measuredWindow(sample(1, 'HTTP', Number.NaN))).toBe(false);
    const table = grpcVsHttpTable([sample(0, 'HTTP', 100), sample(0, 'gRPC', 90), sample(1, 'HTTP', 100), stalled]);
    expect(table).toContain('| gateway | hit sat | 100 | 90 | **0.90** (0.90) | 1 |');
  });
});
