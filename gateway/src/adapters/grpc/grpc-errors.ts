/**
 * How a failed gRPC call to a node becomes a TesseraError, and which failures say something about
 * the node's health.
 *
 * `notAccepted` heuristic (the only failures the dispatcher may retry on another node): status
 * UNAVAILABLE, no response headers received, and a connection-phase message from grpc-js ("No
 * connection established", ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT at connect, name
 * resolution failures). Such a call never reached the node's handlers. A connection that drops while
 * the node works ("Connection dropped", RST_STREAM) is NOT retried: the node may have run it.
 *
 * Breaker failures (`countsAgainstNode`): connection failures, and UNAVAILABLE, INTERNAL, UNKNOWN or
 * DEADLINE_EXCEEDED calls that carry no load trailer, i.e. that the node's application code did not
 * answer (a hung or crashed node, a broken proxy). Answers the node itself gave (its trailer is
 * there) do not count even when they are errors: a full queue, "Request timeout expired" or a model
 * error come from a working node, and routing on load handles overload better than a breaker. The
 * caller's own mistakes (INVALID_ARG, NOT_FOUND, UNSUPPORTED) and cancellations never count.
 */
import type { ServiceError } from '@grpc/grpc-js';
import { GrpcStatus, TesseraError, errorCodeFromGrpc, isTesseraError } from '../../../../shared/src/errors/index.js';
import type { ErrorCode } from '../../../../shared/src/errors/index.js';
import type { UpstreamErrorDetails } from '../../core/routing/index.js';

export type UpstreamError = TesseraError & UpstreamErrorDetails;

const CONNECT_FAILURE =
  /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution failed|failed to connect/i;

const HEALTH_CODES: ReadonlySet<ErrorCode> = new Set(['UNAVAILABLE', 'INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED']);

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof Error && typeof (value as Partial<ServiceError>).code === 'number';
}

/**
 * `load`: the node's figures from the failed call's trailer, when it sent them.
 * `headersReceived`: whether the node had started answering.
 */
export function upstreamErrorFromGrpc(
  error: ServiceError,
  nodeId: string,
  headersReceived: boolean,
  load: { queued: number; inflight: number } | undefined,
): UpstreamError {
  const code = errorCodeFromGrpc(error.code);
  const details = error.details || error.message;
  const notAccepted = error.code === GrpcStatus.UNAVAILABLE && !headersReceived && CONNECT_FAILURE.test(details);
  const message =
    code === 'CANCELLED'
      ? 'the request was cancelled'
      : code === 'DEADLINE_EXCEEDED' && load === undefined
        ? `the request deadline passed before node '${nodeId}' answered`
        : notAccepted
          ? `node '${nodeId}' is unreachable: ${details}`
          : details;
  return Object.assign(new TesseraError(code, message, { cause: error }), { notAccepted, ...(load ? { load } : {}) });
}

export function countsAgainstNode(error: unknown): boolean {
  if (!isTesseraError(error)) return true;
  const details = error as UpstreamError;
  if (details.notAccepted) return true;
  return HEALTH_CODES.has(error.code) && details.load === undefined;
}
