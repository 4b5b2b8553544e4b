import { describe, expect, it } from 'vitest';
import { grpcTimeoutHeader } from './grpc-timeout.js';

describe('grpc-timeout header', () => {
  it('uses milliseconds while they fit in 8 digits, then coarser units, always rounded up', () => {
    expect(grpcTimeoutHeader(1500)).toBe('1500m');
    expect(grpcTimeoutHeader(0.2)).toBe('1m');
    expect(grpcTimeoutHeader(-5)).toBe('1m');
    expect(grpcTimeoutHeader(99_999_999)).toBe('99999999m');
    expect(grpcTimeoutHeader(100_000_000)).toBe('100000S');
    expect(grpcTimeoutHeader(100_000_001)).toBe('100001S');
    expect(grpcTimeoutHeader(Number.MAX_SAFE_INTEGER)).toMatch(/^\d{1,8}H$/);
  });
});
