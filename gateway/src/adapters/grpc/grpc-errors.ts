/**
 * How a failed gRPC call to a node becomes a TesseraError, and which failures say something about
 * the node's health. Both transports (grpc-js and our node:http2 client) end here, so the retry and
 * breaker rules cannot drift apart.
 *
 * `notAccepted` (the only failures the dispatcher may retry on another node): the call never reached
 * the node's handlers. The HTTP/2 client knows it (the connection never came up, the stream was
 * refused) and says so; for grpc-js it is inferred: status UNAVAILABLE, no response headers received,
 * and a connection-phase message ("No connection established", ECONNREFUSED, EHOSTUNREACH,
 * ENETUNREACH, ETIMEDOUT at connect, name resolution failures). A connection that drops while the node
 * works ("Connection dropped", RST_STREAM) is NOT retried: the node may have run it.
 *
 * Breaker failures (`countsAgainstNode`): connection failures, answers the gateway cannot decode
 * (BAD_GATEWAY, 502: the node answered, but not with a usable message), and UNAVAILABLE, INTERNAL, UNKNOWN or
 * DEADLINE_EXCEEDED calls that carry no load trailer, i.e. that the node's application code did not
 * answer (a hung or crashed node, a broken proxy). Answers the node itself gave (its trailer is
 * there) do not count even when they are errors: a full queue, "Request timeout expired" or a model
 * error come from a working node, and routing on load handles overload better than a breaker. The
 * caller's own mistakes (INVALID_ARG, NOT_FOUND, UNSUPPORTED) and cancellations never count, nor does a
 * deadline the gateway's own admission queue used up (`excused`, guarded-call.ts): the node had less
 * than `DEFAULT_MIN_NODE_BUDGET_MS` of it, so its expiry says nothing about the node.
 */
import type { ServiceError } from '@grpc/grpc-js';
import { GrpcStatus, TesseraError, errorCodeFromGrpc, isTesseraError } from '../../../../shared/src/errors/index.js';
import type { ErrorCode } from '../../../../shared/src/errors/index.js';
import type { NodeView, UpstreamErrorDetails } from '../../core/ports/index.js';
import { deadlineBeforeAnswer } from '../../core/routing/upstream-errors.js';

export type UpstreamError = TesseraError & UpstreamErrorDetails;

const CONNECT_FAILURE =
  /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution failed|failed to connect/i;

/** How grpc-js words an answer it could not decode (it reports it as INTERNAL). */
const PARSE_FAILURE = 'Response message parsing error';

const HEALTH_CODES: ReadonlySet<ErrorCode> = new Set(['UNAVAILABLE', 'INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED']);

/** A node's load figures as its trailing metadata reports them. */
export type NodeLoad = { readonly queued: number; readonly inflight: number };

/** A failed call's final status as any gRPC client reports it: the numeric code and its text. */
export interface CallStatus {
  readonly code: number;
  readonly details: string;
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof Error && typeof (value as Partial<ServiceError>).code === 'number';
}

/**
 * Whether a status that came back without response headers reads as a connection-phase failure
 * (grpc-js reports those as UNAVAILABLE with the connect error in its text; a proxy may answer the
 * same way). Statuses the node itself sent never match.
 */
export function looksNotAccepted(status: CallStatus, headersReceived: boolean): boolean {
  return status.code === GrpcStatus.UNAVAILABLE && !headersReceived && CONNECT_FAILURE.test(status.details);
}

/**
 * The TesseraError for a failed call. `notAccepted`: the node never received the request.
 * `load`: the node's figures from the failed call's trailer, when it sent them.
 */
export function upstreamError(
  status: CallStatus,
  nodeId: string,
  notAccepted: boolean,
  load: NodeLoad | undefined,
  cause?: unknown,
): UpstreamError {
  const code = errorCodeFromGrpc(status.code);
  const details = status.details;
  const message =
    code === 'CANCELLED'
      ? 'the request was cancelled'
      : code === 'DEADLINE_EXCEEDED'
        ? deadlineBeforeAnswer(nodeId).message
        : notAccepted
          ? `node '${nodeId}' is unreachable: ${details}`
          : details;
  return Object.assign(new TesseraError(code, message, cause === undefined ? {} : { cause }), { notAccepted, ...(load ? { load } : {}) });
}

/** A grpc-js failure; `headersReceived`: whether the node had started answering. */
export function upstreamErrorFromGrpc(error: ServiceError, nodeId: string, headersReceived: boolean, load: NodeLoad | undefined): UpstreamError {
  const status = { code: error.code, details: error.details || error.message };
  if (status.code === GrpcStatus.INTERNAL && status.details.startsWith(PARSE_FAILURE)) {
    return Object.assign(unusableAnswer(nodeId, status.details, error), { notAccepted: false, ...(load ? { load } : {}) });
  }
  return upstreamError(status, nodeId, looksNotAccepted(status, headersReceived), load, error);
}

function unusableAnswer(nodeId: string, problem: string, cause?: unknown): TesseraError {
  return TesseraError.badGateway(`node '${nodeId}' sent an answer the gateway cannot use: ${problem}`, cause);
}

/**
 * Decodes a node's answer; a failure is the node's fault, not the caller's nor ours: BAD_GATEWAY (502),
 * which counts against the node's breaker whatever its trailer said.
 */
export function decodeNodeAnswer<T>(nodeId: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    throw Object.assign(unusableAnswer(nodeId, error instanceof Error ? error.message : String(error), error), { notAccepted: false });
  }
}

/** The node's gRPC address; a node without one fails as never accepted, so the dispatcher tries another. */
export function grpcAddressOf(node: NodeView): string {
  if (node.grpcAddress === null) {
    throw Object.assign(TesseraError.unavailable(`node '${node.id}' has no gRPC address`), { notAccepted: true });
  }
  return node.grpcAddress;
}

export function countsAgainstNode(error: unknown): boolean {
  if (!isTesseraError(error)) return true;
  const details = error as UpstreamError;
  // Not the node's doing (guarded-call.ts): a client cancellation, or a deadline spent in the gateway's queue.
  if (details.excused === true) return false;
  if (details.notAccepted || error.code === 'BAD_GATEWAY') return true;
  return HEALTH_CODES.has(error.code) && details.load === undefined;
}
