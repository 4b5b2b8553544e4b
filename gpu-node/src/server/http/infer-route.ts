/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: read the (possibly compressed) body within its limits,
 * decode it with the KServe codec, run it through NodeCore with an AbortSignal that fires when the
 * client disconnects or the gateway's deadline header runs out (504 then), and encode (and compress,
 * if the client accepts it) the response.
 *
 * The logic is written once against `InferHttpInput` and served two ways: by the node:http fast path
 * (native-infer.ts, what the listening server uses: no Web Request/Response per call) and by the Hono
 * route (`handleInfer`, for `app.fetch` without a socket).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import { INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';
import { extractTraceContext, TRACEPARENT_HEADER } from '../../../../shared/src/tracing/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { payloadBodyLimits, readBody, type ReadBodyOptions } from './body-reader.js';
import { decodeInfer, encodeInfer, joinChunks, jsonPartLength, rawInputModelOf } from './infer-codec.js';
import { requestDeadline } from './request-deadline.js';
import { compressBody, negotiateResponseCoding } from './response-compression.js';
import type { HttpLimits } from './server-options.js';

/** Triton's answer (501) to /infer on a decoupled model: such models stream through generate_stream or gRPC. */
export const HTTP_DECOUPLED_REFUSAL = "HTTP end point doesn't support models with decoupled transaction policy";


export interface InferRouteContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

/** What the infer logic needs of an HTTP request, whichever server API carries it. */
export interface InferHttpInput {
  /** A request header by its lower-case name; null when absent. */
  header(name: string): string | null;
  /** The whole body, decompressed, within the limit (see body-reader.ts). */
  readBody(options: ReadBodyOptions): Promise<Uint8Array>;
  /** Fires when the client disconnects. */
  readonly clientSignal: AbortSignal;
}

/** A successful answer: status 200 with these headers (no Content-Length) and the body's chunks, to write in order. */
export interface InferHttpAnswer {
  readonly headers: Record<string, string>;
  /** Views of the outputs among them (infer-codec.ts): write them as they are, never change them. */
  readonly chunks: readonly Uint8Array[];
  readonly byteLength: number;
}

export function runInfer(
  context: InferRouteContext,
  input: InferHttpInput,
  modelName: string,
  modelVersion: string | undefined,
): Promise<InferHttpAnswer> {
  const deadlineHeader = input.header(DEADLINE_HEADER);
  // Without a deadline (the usual request) there is nothing to tell apart or clear: no wrapper around the infer.
  if (deadlineHeader === null) return inferWithin(context, input, modelName, modelVersion, input.clientSignal);
  return inferWithDeadline(context, input, modelName, modelVersion, deadlineHeader);
}

async function inferWithDeadline(
  context: InferRouteContext,
  input: InferHttpInput,
  modelName: string,
  modelVersion: string | undefined,
  deadlineHeader: string,
): Promise<InferHttpAnswer> {
  // Checked first, so a malformed header is refused before the body is read.
  const deadline = requestDeadline(deadlineHeader, input.clientSignal);
  try {
    return await inferWithin(context, input, modelName, modelVersion, deadline.signal);
  } catch (error) {
    // The core answers CANCELLED for an aborted request; when the deadline did it, say so (504).
    if (deadline.expired() && !input.clientSignal.aborted && error instanceof TesseraError && error.code === 'CANCELLED') {
      throw new TesseraError('DEADLINE_EXCEEDED', 'the request deadline passed', { cause: error });
    }
    throw error;
  } finally {
    deadline.dispose();
  }
}

/** The Hono route: the same logic over a Web Request. */
export async function handleInfer(
  context: InferRouteContext,
  request: Request,
  modelName: string,
  modelVersion: string | undefined,
): Promise<Response> {
  const input: InferHttpInput = {
    header: (name) => request.headers.get(name),
    readBody: (options) => readBody(request, options),
    clientSignal: request.signal,
  };
  const answer = await runInfer(context, input, modelName, modelVersion);
  return new Response(joinChunks(answer), { status: 200, headers: answer.headers });
}

const bodyLimits = new WeakMap<HttpLimits, ReadBodyOptions>();

/** The body limits of `limits`, made once per server rather than per request. */
function bodyLimitsOf(limits: HttpLimits): ReadBodyOptions {
  let options = bodyLimits.get(limits);
  if (options === undefined) {
    options = payloadBodyLimits(limits);
    bodyLimits.set(limits, options);
  }
  return options;
}

async function inferWithin(
  context: InferRouteContext,
  input: InferHttpInput,
  modelName: string,
  modelVersion: string | undefined,
  signal: AbortSignal,
): Promise<InferHttpAnswer> {
  const { core, limits } = context;
  const body = await input.readBody(bodyLimitsOf(limits));
  const headerLength = input.header(INFER_HEADER_LENGTH);

  const jsonBytes = jsonPartLength(headerLength, body.byteLength);
  if (jsonBytes > limits.maxInputSize) {
    // Triton's wording, so clients that grep for the flag name keep working.
    throw TesseraError.invalidArg(
      `Request JSON size of ${jsonBytes} bytes exceeds the maximum allowed value of ${limits.maxInputSize} bytes. ` +
        'Use --http-max-input-size to increase the limit.',
    );
  }

  // A raw body (header length 0) is one tensor; only the model can say which and of what shape.
  const rawInputModel = jsonBytes === 0 && headerLength !== null ? rawInputModelOf(core, modelName, modelVersion) : undefined;
  const decoded = decodeInfer({ body, headerLength, modelName, modelVersion, maxJsonInputBytes: limits.maxInputSize, rawInputModel });

  // The caller's W3C trace context (traceparent/tracestate): the node's spans continue its trace.
  // Looked for only when a traceparent came, so an untraced request makes no reader closure.
  const traceParent = input.header(TRACEPARENT_HEADER) === null ? undefined : extractTraceContext((name) => input.header(name));
  const response = await core.infer(
    decoded.request,
    traceParent === undefined ? { signal, decoupledRefusal: HTTP_DECOUPLED_REFUSAL } : { signal, decoupledRefusal: HTTP_DECOUPLED_REFUSAL, traceParent },
  );
  const encoded = encodeInfer(response, decoded);

  // The codec's headers never carry Content-Length (the server adapter sets it from the possibly
  // compressed payload), and they are this answer's own object: completed in place, not copied.
  const headers = encoded.headers;
  headers['Vary'] = 'Accept-Encoding';
  const acceptEncoding = input.header('accept-encoding');
  const coding = acceptEncoding === null ? undefined : negotiateResponseCoding(acceptEncoding);
  if (coding === undefined) return { headers, chunks: encoded.chunks, byteLength: encoded.byteLength };
  const payload = await compressBody(joinChunks(encoded), coding);
  headers['Content-Encoding'] = coding;
  return { headers, chunks: [payload], byteLength: payload.byteLength };
}
