/**
 * KServe v2 gRPC client (`ModelInfer`, inputs and outputs in raw_*_contents) straight on node:http2:
 * one HTTP/2 session per client multiplexes the concurrent calls, as Triton's own gRPC client does with
 * a shared channel. Not grpc-js, whose call machinery (interceptors, metadata objects, per-call timers)
 * costs ~250 us of CPU per call against ~50 us for a bare http2 stream, and the load generator shares
 * its machine with the servers it measures.
 *
 * A call is a POST of one length-prefixed protobuf message (shared/src/grpc/grpc-frame.ts) with `te: trailers`; the
 * answer is one message and a `grpc-status` in the trailers, or in the headers of a trailers-only
 * answer (how servers answer errors before any message). A non-zero status rejects with a
 * GrpcStatusError (`NOT_FOUND: <grpc-message>`).
 *
 * The framed request is cached per InferRequest object, as perf_analyzer prepares its inputs once: a
 * closed loop re-sending the same object costs no encoding and its `sendUs` is then ~0 (only the first
 * call of each object measures InferRequest → protobuf bytes). A request object must therefore not be
 * mutated once sent. Client recv is the protobuf → InferResponse decoding.
 *
 * A session that fails or receives GOAWAY is dropped at once, so the next call connects afresh. Calls
 * in flight on it reject with the reason when it fails or when the GOAWAY carries an error code; after
 * a graceful GOAWAY (code 0) the server still answers the calls it had accepted, and they complete.
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { toBinary } from '@bufbuild/protobuf';
import { grpcStatusName } from '../../../../shared/src/errors/index.js';
import { GRPCInferenceService, ModelInferRequestSchema, ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeGrpcMessage, decodeMessage, frameGrpcMessage, inferRequestToProto, inferResponseFromProto, UnaryMessageReader } from '../../../../shared/src/grpc/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { InferClient, InferResult } from './infer-client.js';

const MODEL_INFER_PATH = `/${GRPCInferenceService.typeName}/${GRPCInferenceService.method.modelInfer.name}`;
/** As the grpc-js channel this client replaced was configured. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long close() waits for calls in flight before cutting the connection. */
const CLOSE_GRACE_MS = 2000;
/**
 * Receive window for answers, per stream and for the connection: HTTP/2's default 64 KiB makes a
 * burst of 64 answers of 4 KiB wait for WINDOW_UPDATE round trips; gRPC's C++ client (perf_analyzer's)
 * sizes its windows by bandwidth-delay probing to megabytes.
 */
const FLOW_CONTROL_WINDOW = 16 * 1024 * 1024;
const elapsedUs = (since: number): number => (performance.now() - since) * 1000;

/** A call answered with a non-OK gRPC status. */
export class GrpcStatusError extends Error {
  constructor(
    /** The numeric status (GrpcStatus in shared/src/errors). */
    readonly grpcStatus: number,
    /** The server's grpc-message, percent-decoded. */
    readonly details: string,
  ) {
    super(`${grpcStatusName(grpcStatus)}: ${details || `gRPC status ${grpcStatus}`}`);
    this.name = 'GrpcStatusError';
  }
}

/** `metadata` goes on every call (an API key, as `authorization` or `x-api-key`). */
export function createGrpcInferClient(host: string, port: number, metadata: Readonly<Record<string, string>> = {}): InferClient {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const authority = `http://${where}`;
  // User metadata first, so it cannot override what makes the request a gRPC call.
  const requestHeaders: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) requestHeaders[key.toLowerCase()] = value;
  Object.assign(requestHeaders, {
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: MODEL_INFER_PATH,
    [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
    te: 'trailers',
  });
  const framedRequests = new WeakMap<InferRequest, Buffer>();
  let session: ClientHttp2Session | undefined;
  /** Why each session stopped taking calls, for the calls it then fails. */
  const endReasons = new WeakMap<ClientHttp2Session, string>();
  let closed = false;

  const openSession = (): ClientHttp2Session => {
    const opened = connect(authority, { settings: { initialWindowSize: FLOW_CONTROL_WINDOW } });
    // The connection's own window can only be raised once the session is up.
    opened.once('connect', () => opened.setLocalWindowSize(FLOW_CONTROL_WINDOW));
    const retire = (reason: string): void => {
      if (!endReasons.has(opened)) endReasons.set(opened, reason);
      if (session === opened) session = undefined;
    };
    opened.on('goaway', (code: number) => retire(`the server sent GOAWAY with code ${code}`));
    // Stream errors carry the details to the calls; the listener keeps a session error from being uncaught.
    opened.on('error', (error: Error) => retire(error.message));
    opened.on('close', () => retire('the connection closed'));
    return opened;
  };

  const call = (framed: Buffer): Promise<Buffer> =>
    new Promise<Buffer>((resolve, reject) => {
      if (closed) {
        reject(new Error(`the gRPC client for ${where} is closed`));
        return;
      }
      // A session GOAWAY has closed may not have emitted its event yet; it takes no new streams.
      if (session !== undefined && (session.closed || session.destroyed)) session = undefined;
      const current = (session ??= openSession());
      let stream: ClientHttp2Stream;
      try {
        stream = current.request(requestHeaders);
      } catch (error) {
        reject(new Error(`ModelInfer to ${where} failed: ${(error as Error).message}`, { cause: error }));
        return;
      }
      const reader = new UnaryMessageReader(MAX_MESSAGE_BYTES);
      let httpStatus: number | undefined;
      let grpcStatus: string | undefined;
      let grpcMessage: string | string[] | undefined;
      let failure: Error | undefined;
      const readStatus = (headers: IncomingHttpHeaders): void => {
        const status = headers['grpc-status'];
        if (status !== undefined) {
          grpcStatus = Array.isArray(status) ? status[0] : status;
          grpcMessage = headers['grpc-message'];
        }
      };
      stream.on('response', (headers) => {
        httpStatus = Number(headers[constants.HTTP2_HEADER_STATUS]);
        readStatus(headers); // a trailers-only answer
      });
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => {
        if (failure !== undefined) return;
        try {
          reader.push(chunk);
        } catch (error) {
          failure = error as Error;
          stream.close(constants.NGHTTP2_CANCEL);
        }
      });
      stream.on('error', (error: Error) => (failure ??= error));
      stream.on('close', () => {
        const prefix = `ModelInfer to ${where}`;
        if (failure !== undefined) {
          const sessionEnd = endReasons.get(current);
          reject(new Error(`${prefix} failed: ${failure.message}${sessionEnd === undefined ? '' : `; ${sessionEnd}`}`, { cause: failure }));
        }
        else if (grpcStatus === undefined) {
          const sessionEnd = endReasons.get(current) ?? (current.destroyed ? 'the connection closed' : undefined);
          reject(new Error(`${prefix} ended without a gRPC status: ${describeEnd(httpStatus, stream.rstCode, sessionEnd)}`));
        }
        else if (grpcStatus !== '0') reject(new GrpcStatusError(Number(grpcStatus), decodeGrpcMessage(grpcMessage)));
        else {
          try {
            resolve(reader.message());
          } catch (error) {
            reject(new Error(`${prefix}: ${(error as Error).message}`));
          }
        }
      });
      stream.end(framed);
    });

  return {
    protocol: 'grpc',
    async infer(request: InferRequest): Promise<InferResult> {
      const t0 = performance.now();
      let framed = framedRequests.get(request);
      if (framed === undefined) {
        framed = frameGrpcMessage(toBinary(ModelInferRequestSchema, inferRequestToProto(request)));
        framedRequests.set(request, framed);
      }
      const sendUs = elapsedUs(t0);
      const message = await call(framed);
      const t1 = performance.now();
      const response = inferResponseFromProto(decodeMessage(ModelInferResponseSchema, message));
      return { response, sendUs, recvUs: elapsedUs(t1) };
    },
    async close() {
      closed = true;
      const last = session;
      session = undefined;
      if (last === undefined || last.destroyed) return;
      // Lets calls in flight finish, but not forever: a hung server must not hang the bench.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => last.destroy(), CLOSE_GRACE_MS);
        last.close(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/** Why a stream ended with no status: the HTTP status when not 200, the session's fate, the reset code. */
function describeEnd(httpStatus: number | undefined, rstCode: number | undefined, sessionEnd: string | undefined): string {
  if (httpStatus !== undefined && httpStatus !== 200) return `HTTP status ${httpStatus}`;
  if (sessionEnd !== undefined) return sessionEnd;
  if (rstCode !== undefined && rstCode !== constants.NGHTTP2_NO_ERROR) return `the stream was reset (HTTP/2 error code ${rstCode})`;
  return httpStatus === undefined ? 'the stream closed before any answer' : 'the answer ended without trailers';
}
