/**
 * The front door's ModelInfer served straight on the HTTP/2 stream, ahead of grpc-js, as the node
 * serves its own (shared/src/grpc/grpc-js-internals.ts routes the stream here first,
 * shared/src/grpc/h2-unary-call.ts reads the call and writes the answer). The same pipeline as the
 * grpc-js handler (front-infer.ts → DirectInfer: authentication from `authorization`/`x-api-key`,
 * tiers, limits, admission, the deadline from `grpc-timeout`, the cache, splits, breakers, tenant-scoped
 * sequences, statistics, metrics, access log), the same statuses and trailing metadata, without
 * grpc-js's per-call machinery: interceptor chain, Metadata objects, call objects, the protobuf-es
 * encoding of the answer, and headers, message and trailers written in separate turns.
 *
 * Why: the front door cost more CPU per request than HTTP (issue 17: 1,800 vs 1,550 µs per miss, 975
 * vs 750 µs per hit at 150 req/s on a quiet box).
 *
 * It takes only the plain case and leaves everything else to grpc-js: another method, a content-type
 * that is not gRPC, a compressed request, a `grpc-timeout` it cannot parse. h2-front-infer.test.ts
 * sends each case to a front door with and without it and compares the answers.
 *
 * The answer: on a miss, the node's ModelInferResponse as received with the client's id appended
 * (shared/src/grpc/forwarded-response.ts), or, when the gateway changed the response (a sequence's
 * id put back), encoded from the decoded response. On a hit, read back from the cached KServe binary
 * body and encoded by the node's encoder (encodeInferResponseFramed: the outputs' bytes uncopied).
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import {
  CORKED_VIEW_BYTES,
  decodeModelInferRequest,
  encodeForwardedInferResponseFramed,
  encodeInferResponseFramed,
  plainUnaryTimeoutMs,
  receivedResponseOf,
  serveH2Unary,
  type EncodedInferResponse,
  type H2UnaryCall,
  type StreamTaker,
  type UnaryFastPathLimits,
  type UnaryStream,
} from '../../../../shared/src/grpc/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { DirectInfer } from '../../core/app/index.js';
import type { HttpAnswer } from '../../core/http/index.js';
import { answerMetadataValues, errorMessageOf, grpcCodeOfHttp, H2StreamHeaderReader } from './call-bridge.js';
import { MODEL_INFER_PATH, answerInferResponse, frontInferAnswer } from './front-infer.js';
import { readPlainInferRequest } from '../../../../shared/src/grpc/plain-infer-request.js';

export interface FrontInferFastPathOptions extends UnaryFastPathLimits {
  readonly logger?: Logger | undefined;
}

/** A taker for node:http2's streams (ahead of grpc-js) and the raw HTTP/2 front's alike (`grpcRawH2`). */
export function frontInferFastPath(serveInfer: DirectInfer, options: FrontInferFastPathOptions): StreamTaker<UnaryStream> {
  return (stream, headers) => {
    const timeoutMs = plainUnaryTimeoutMs(headers, MODEL_INFER_PATH);
    if (timeoutMs === undefined) return false;
    // grpc-js's deadline: the moment the stream arrived plus the timeout.
    const deadlineAt = Date.now() + timeoutMs;
    serveH2Unary(stream, { path: MODEL_INFER_PATH, maxReceiveBytes: options.maxReceiveBytes, timeoutMs }, (message, call) => {
      void run(serveInfer, options, headers, deadlineAt, message, call);
    });
    return true;
  };
}

/**
 * Cache hits' gRPC answers, by the KServe body they were encoded from. A hit hands back the cached body
 * object itself (the in-process copy, for a request without an id of its own), so a repeated hit skips
 * reading the body into tensors and encoding them again (the largest part of what a gRPC hit cost beyond
 * an HTTP hit: docs/benchmarks.md, issue 17, 2026-11-26c). Weak: an entry lives as long as its body.
 */
const hitAnswers = new WeakMap<Uint8Array, EncodedInferResponse>();

function encodedAnswer(answer: HttpAnswer, id: string, hit: boolean): EncodedInferResponse {
  const produced = answer.inferResponse;
  if (produced !== undefined) {
    const received = receivedResponseOf(produced);
    // The node was sent an empty id; one it answered with anyway is replaced, as the HTTP body's is.
    if (received !== undefined && produced.id === '') return encodeForwardedInferResponseFramed(received, id, CORKED_VIEW_BYTES);
    return encodeInferResponseFramed({ ...produced, id });
  }
  const body = answer.body;
  if (!hit || !(body instanceof Uint8Array)) return encodeInferResponseFramed(answerInferResponse(answer));
  let encoded = hitAnswers.get(body);
  if (encoded === undefined) {
    encoded = encodeInferResponseFramed(answerInferResponse(answer));
    hitAnswers.set(body, encoded);
  }
  return encoded;
}

const NO_METADATA = Object.freeze({});
/** `{ 'x-cache': status }`, frozen, one per status the pipeline names (a handful; bounded all the same). */
const cacheOnlyMetadata = new Map<string, Readonly<Record<string, string>>>();

function cacheOnly(status: string): Readonly<Record<string, string>> {
  let metadata = cacheOnlyMetadata.get(status);
  if (metadata === undefined) {
    if (cacheOnlyMetadata.size >= 16) cacheOnlyMetadata.clear();
    metadata = Object.freeze({ 'x-cache': status });
    cacheOnlyMetadata.set(status, metadata);
  }
  return metadata;
}

/**
 * A miss's or hit's trailing metadata is most often `x-cache` alone: then the frozen one, so its answer's
 * headers and trailers are encoded once (shared/src/grpc/h2-unary-call.ts) instead of per call.
 */
function frozenWhenCacheOnly(metadata: Record<string, string>): Readonly<Record<string, string>> {
  const status = metadata['x-cache'];
  if (status === undefined) return metadata;
  for (const name in metadata) if (name !== 'x-cache') return metadata;
  return cacheOnly(status);
}

async function run(
  serveInfer: DirectInfer,
  options: FrontInferFastPathOptions,
  streamHeaders: IncomingHttpHeaders,
  deadlineAt: number,
  message: Buffer,
  call: H2UnaryCall,
): Promise<void> {
  try {
    // Decoded before anything else, as grpc-js's deserializer does: undecodable bytes are INVALID_ARGUMENT even unauthenticated.
    // A plain request is read and checked in one pass; any other goes protobuf's way, its checks in frontInferAnswer.
    const msg = readPlainInferRequest(message) ?? decodeModelInferRequest(message);
    const answer = await frontInferAnswer(serveInfer, msg, message, new H2StreamHeaderReader(streamHeaders, deadlineAt), call, MODEL_INFER_PATH);
    const metadata = frozenWhenCacheOnly(answerMetadataValues(answer.headers));
    if (answer.status !== 200) {
      call.fail(grpcCodeOfHttp(answer.status), errorMessageOf(answer.body, answer.status), metadata);
      return;
    }
    const encoded = encodedAnswer(answer, msg.id, metadata['x-cache'] === 'HIT');
    if (encoded.messageBytes > options.maxSendBytes) {
      call.fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${encoded.messageBytes} vs. ${options.maxSendBytes})`);
      return;
    }
    // x-cache also as initial metadata, for clients that only read headers (as the grpc-js handler sends it).
    const cacheStatus = metadata['x-cache'];
    call.reply(encoded.chunks, cacheStatus === undefined ? NO_METADATA : cacheOnly(cacheStatus), metadata);
  } catch (error) {
    const tessera = toTesseraError(error);
    const code = grpcStatusOf(tessera.code);
    if (code === GrpcStatus.INTERNAL) options.logger?.error('gRPC front door: unexpected failure', { error: String(error) });
    call.fail(code, tessera.message);
  }
}
