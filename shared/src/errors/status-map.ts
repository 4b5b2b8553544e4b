/**
 * The single place where a Tessera error code becomes an HTTP status, a gRPC status code and the
 * KServe v2 error body (`{"error": "..."}`), following Triton's HttpCodeFromError and its gRPC mapping.
 */
import type { ErrorCode, TesseraError } from './tessera-error.js';

/** gRPC status codes (numbers from the gRPC spec), kept here so shared/ needs no gRPC dependency. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

const GRPC_STATUS_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(GrpcStatus).map(([name, code]) => [code, name]));

/** The spec's name of a gRPC status code (`NOT_FOUND` for 5); codes outside the spec read as UNKNOWN, as gRPC treats them. */
export function grpcStatusName(code: number): keyof typeof GrpcStatus {
  return (GRPC_STATUS_NAMES.get(code) ?? 'UNKNOWN') as keyof typeof GrpcStatus;
}

interface Mapping {
  readonly http: number;
  readonly grpc: GrpcStatusCode;
}

// Triton answers CANCELLED and ALREADY_EXISTS with 400 over HTTP (not 499/409); we keep that so
// Triton's clients see what they expect. DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED and BAD_GATEWAY are
// ours; BAD_GATEWAY is UNAVAILABLE over gRPC, as gRPC's HTTP mapping reads a 502 (worth a retry).
const MAPPING: Record<ErrorCode, Mapping> = {
  INVALID_ARG: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  UNSUPPORTED: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  ALREADY_EXISTS: { http: 400, grpc: GrpcStatus.ALREADY_EXISTS },
  CANCELLED: { http: 400, grpc: GrpcStatus.CANCELLED },
  DEADLINE_EXCEEDED: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED },
  RESOURCE_EXHAUSTED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  BAD_GATEWAY: { http: 502, grpc: GrpcStatus.UNAVAILABLE },
  UNKNOWN: { http: 400, grpc: GrpcStatus.UNKNOWN },
};

export function httpStatusOf(code: ErrorCode): number {
  return MAPPING[code].http;
}

export function grpcStatusOf(code: ErrorCode): GrpcStatusCode {
  return MAPPING[code].grpc;
}

/** KServe v2 / Triton error body. */
export function errorBody(error: TesseraError): { error: string } {
  return { error: error.message };
}

/** The reverse direction, for clients (the gateway) that receive a gRPC status from a node. */
export function errorCodeFromGrpc(status: number): ErrorCode {
  switch (status) {
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.OUT_OF_RANGE:
    case GrpcStatus.FAILED_PRECONDITION:
      return 'INVALID_ARG';
    case GrpcStatus.NOT_FOUND:
      return 'NOT_FOUND';
    case GrpcStatus.UNAVAILABLE:
      return 'UNAVAILABLE';
    case GrpcStatus.UNIMPLEMENTED:
      return 'UNSUPPORTED';
    case GrpcStatus.ALREADY_EXISTS:
      return 'ALREADY_EXISTS';
    case GrpcStatus.CANCELLED:
      return 'CANCELLED';
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 'DEADLINE_EXCEEDED';
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return 'RESOURCE_EXHAUSTED';
    case GrpcStatus.INTERNAL:
    case GrpcStatus.DATA_LOSS:
      return 'INTERNAL';
    default:
      return 'UNKNOWN';
  }
}

/** The reverse direction for HTTP answers from a node. */
export function errorCodeFromHttp(status: number): ErrorCode {
  if (status === 404) return 'NOT_FOUND';
  if (status === 503) return 'UNAVAILABLE';
  if (status === 501) return 'UNSUPPORTED';
  if (status === 504) return 'DEADLINE_EXCEEDED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status >= 500) return 'INTERNAL';
  return 'INVALID_ARG';
}
