/**
 * The gRPC status of an HTTP/2 call that ended without one from the server, as the gRPC over HTTP/2
 * spec defines it: from the stream's RST_STREAM code, or from a non-200 HTTP status (a proxy or a
 * server that is not gRPC answered). The texts are grpc-js's, so logs and error messages read the same
 * whichever transport the gateway runs.
 */
import { constants } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import type { CallStatus } from './grpc-errors.js';

/** A stream the server reset. REFUSED_STREAM is handled by the caller: it means the node never saw the call. */
export function statusFromResetCode(rstCode: number): CallStatus {
  switch (rstCode) {
    case constants.NGHTTP2_REFUSED_STREAM:
      return { code: GrpcStatus.UNAVAILABLE, details: 'Stream refused by server' };
    case constants.NGHTTP2_CANCEL:
      return { code: GrpcStatus.CANCELLED, details: 'Call cancelled' };
    case constants.NGHTTP2_ENHANCE_YOUR_CALM:
      return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'Bandwidth exhausted or memory limit exceeded' };
    case constants.NGHTTP2_INADEQUATE_SECURITY:
      return { code: GrpcStatus.PERMISSION_DENIED, details: 'Protocol not secure enough' };
    case constants.NGHTTP2_NO_ERROR:
      return { code: GrpcStatus.INTERNAL, details: `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)` };
    default:
      return { code: GrpcStatus.INTERNAL, details: `Received RST_STREAM with code ${rstCode}` };
  }
}

/** An answer whose HTTP status is not 200 (it then carries no gRPC status of its own). */
export function statusFromHttpStatus(httpStatus: number): CallStatus {
  const details = `Received HTTP status code ${httpStatus}`;
  switch (httpStatus) {
    case 400:
      return { code: GrpcStatus.INTERNAL, details };
    case 401:
      return { code: GrpcStatus.UNAUTHENTICATED, details };
    case 403:
      return { code: GrpcStatus.PERMISSION_DENIED, details };
    case 404:
      return { code: GrpcStatus.UNIMPLEMENTED, details };
    case 429:
    case 502:
    case 503:
    case 504:
      return { code: GrpcStatus.UNAVAILABLE, details };
    default:
      return { code: GrpcStatus.UNKNOWN, details };
  }
}
