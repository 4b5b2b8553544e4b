/**
 * One ModelInfer through the gateway's infer pipeline (core/app/direct-infer.ts → infer-route.ts), the
 * same `serveInfer` as the HTTP fast path (authentication, tiers, rate limits, admission, deadlines,
 * the response cache, version splits, breakers, tenant-scoped sequences, statistics, metrics, access
 * log). The request is decoded once, here, and keeps the bytes it arrived as (received-bytes.ts): the
 * transport forwards them with the gateway's fields appended instead of encoding the tensors again
 * (shared/src/grpc/infer-request-encoder.ts, encodeForwardedInferRequestFramed). Every output is
 * asked for binary, so the answer's bytes come back exactly: a hit's are read back from the cached
 * KServe body into a ModelInferResponse, a miss's come from the decoded upstream answer itself.
 */
import type { Deadline, Metadata } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { checkForwardableFraming, inferRequestFromProto, inferResponseToProto } from '../../../../shared/src/grpc/index.js';
import { decodeInferResponseBody, INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { DirectInfer, DirectInferRequest } from '../../core/app/index.js';
import { BodyOverLimitError, cancellationOf, type Cancellation, type HeaderReader, type HttpAnswer } from '../../core/http/index.js';
import { metadataHeaders, requireModelName, versionOf } from './call-bridge.js';
import type { PlainInferRequest } from '../../../../shared/src/grpc/plain-infer-request.js';
import { receivedBytesOf } from './received-bytes.js';

export const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

export type FrontInferResult = { readonly ok: true; readonly response: ModelInferResponse; readonly answer: HttpAnswer } | { readonly ok: false; readonly answer: HttpAnswer };

/** Request-side problems (bad tensors, no model name) throw TesseraError before the pipeline runs. */
export async function frontInfer(
  serveInfer: DirectInfer,
  msg: ModelInferRequest,
  call: { readonly metadata: Metadata; getDeadline(): Deadline },
  signal: AbortSignal,
  path = MODEL_INFER_PATH,
): Promise<FrontInferResult> {
  const answer = await frontInferAnswer(serveInfer, msg, receivedBytesOf(msg), metadataHeaders(call.metadata, call.getDeadline()), cancellationOf(signal), path);
  if (answer.status !== 200) return { ok: false, answer };
  // This request's own upstream answer as decoded (no KServe body to read back), else the cached body's.
  const response = answer.inferResponse === undefined ? answerInferResponse(answer) : { ...answer.inferResponse, id: msg.id };
  return { ok: true, response: inferResponseToProto(response), answer };
}

/** A ModelInferRequest as the front door read it: protobuf's message, or a plain one read and checked in one pass. */
export type FrontInferMessage = ModelInferRequest | PlainInferRequest;

/**
 * `msg` (which arrived as `received`, when known) through the pipeline with `headers` as its request
 * headers: the pipeline's HTTP answer, a KServe binary body on success. Both front paths call this:
 * grpc-js's handler (above) and the h2 fast path (h2-front-infer.ts), each awaiting it in a try.
 * Not async: the pipeline's own promise is handed back, not wrapped in a second one that settles
 * two microtask turns later; request problems throw here, synchronously, as TesseraError.
 */
export function frontInferAnswer(
  serveInfer: DirectInfer,
  msg: FrontInferMessage,
  received: Uint8Array | undefined,
  headers: RequestMetadata,
  cancel: Cancellation,
  path: string,
): Promise<HttpAnswer> {
  const model = requireModelName(msg.modelName, 'ModelInfer');
  const version = versionOf(msg.modelVersion);
  const plain = !('$typeName' in msg);
  const decoded = plain ? msg.request : inferRequestFromProto(msg);
  // A message whose last field lies about its length would swallow what the transport appends (a plain
  // read took every field whole, up to the message's end: nothing to check again).
  if (received !== undefined && !plain) checkForwardableFraming(received);
  // One object with every field named, not a rest copy and two spreads per call: the version as routes
  // know it ('007' is '7', as the HTTP path takes it from the URL) and the bytes the message arrived as.
  const request: InferRequest = {
    id: decoded.id,
    modelName: decoded.modelName,
    modelVersion: version,
    inputs: decoded.inputs,
    outputs: decoded.outputs,
    parameters: decoded.parameters,
    forwardable: received,
  };
  return serveInfer(new FrontRequest(path, headers, received, cancel, { request, binaryOutputDefault: true, outputBinary: NO_OUTPUT_CHOICES }), model, version);
}

/** No output named binary or not: every output follows binaryOutputDefault (read only, shared by every call). */
const NO_OUTPUT_CHOICES: ReadonlyMap<string, boolean> = new Map();

/** A call's metadata as request headers, by lower-case name: a Map, or read on demand (H2StreamHeaderReader). */
export interface RequestMetadata {
  get(name: string): string | undefined;
}

/**
 * One call as the pipeline reads it, in one object of a fixed shape (as the HTTP fast path's
 * NativeRequest): its `signal` is the call's, read only where something hands it on, so a cache hit
 * on the h2 fast path makes no AbortController (core/http/cancellation.ts says why).
 */
class FrontRequest implements DirectInferRequest, HeaderReader {
  readonly headers: HeaderReader = this;
  // Both callers write a produced answer from `inferResponse` (frontInfer, h2-front-infer.ts's encodedAnswer).
  readonly answersFromResponse = true;

  constructor(
    readonly path: string,
    private readonly metadata: RequestMetadata,
    private readonly received: Uint8Array | undefined,
    readonly cancel: Cancellation,
    readonly decoded: DirectInferRequest['decoded'],
  ) {}

  get(name: string): string | null {
    return this.metadata.get(name.toLowerCase()) ?? null;
  }

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  async readBody(maxBytes: number): Promise<Uint8Array> {
    const size = this.received?.length ?? 0;
    // The same error as an HTTP body over the limit (readTierBody turns it into the tier's 413).
    if (size > maxBytes) throw new BodyOverLimitError(maxBytes, String(size));
    return this.received ?? new Uint8Array();
  }
}

/** A successful answer's KServe binary body read back into the response (every output binary: bytes exact). */
export function answerInferResponse(answer: HttpAnswer): InferResponse {
  const bytes = typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : (answer.body ?? new Uint8Array());
  return decodeInferResponseBody(bytes, headerValue(answer.headers, INFER_HEADER_LENGTH) ?? null);
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const key in headers) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}
