import { describe, expect, it } from 'vitest';
import { ERROR_CODES, TesseraError, toTesseraError } from './tessera-error.js';
import { errorBody, errorCodeFromGrpc, grpcStatusName, grpcStatusOf, GrpcStatus, httpStatusOf } from './status-map.js';

describe('error status mapping', () => {
  it('follows Triton for its own codes', () => {
    expect(httpStatusOf('INVALID_ARG')).toBe(400);
    expect(httpStatusOf('NOT_FOUND')).toBe(404);
    expect(httpStatusOf('UNAVAILABLE')).toBe(503);
    expect(httpStatusOf('UNSUPPORTED')).toBe(501);
    expect(httpStatusOf('INTERNAL')).toBe(500);
    expect(httpStatusOf('CANCELLED')).toBe(400);
    expect(httpStatusOf('ALREADY_EXISTS')).toBe(400);
    expect(grpcStatusOf('UNSUPPORTED')).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(grpcStatusOf('INVALID_ARG')).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('names gRPC status codes, and codes outside the spec as UNKNOWN', () => {
    expect(grpcStatusName(0)).toBe('OK');
    expect(grpcStatusName(5)).toBe('NOT_FOUND');
    expect(grpcStatusName(16)).toBe('UNAUTHENTICATED');
    expect(grpcStatusName(42)).toBe('UNKNOWN');
  });

  it('round-trips every code through gRPC; BAD_GATEWAY reads back as UNAVAILABLE', () => {
    for (const code of ERROR_CODES) {
      expect(errorCodeFromGrpc(grpcStatusOf(code))).toBe(code === 'BAD_GATEWAY' ? 'UNAVAILABLE' : code);
    }
  });

  it("answers a node's unusable response with 502 over HTTP and UNAVAILABLE over gRPC", () => {
    expect(httpStatusOf('BAD_GATEWAY')).toBe(502);
    expect(grpcStatusOf('BAD_GATEWAY')).toBe(GrpcStatus.UNAVAILABLE);
  });

  it('builds the KServe error body and wraps foreign throwables as INTERNAL', () => {
    expect(errorBody(TesseraError.notFound("Request for unknown model: 'x' is not found"))).toEqual({
      error: "Request for unknown model: 'x' is not found",
    });
    const wrapped = toTesseraError(new RangeError('boom'));
    expect(wrapped.code).toBe('INTERNAL');
    expect(wrapped.message).toBe('boom');
  });
});
