/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: read the (possibly compressed) body within its limits,
 * decode it with the KServe codec, run it through NodeCore with an AbortSignal that fires when the
 * client disconnects or the gateway's deadline header runs out (504 then), and encode (and compress, if the client accepts it) the response.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { extractTraceContext } from '../../../../shared/src/tracing/index.js';
import type { NodeCore } from '../../core/index.js';
import { readBody } from './body-reader.js';
import { decodeInfer, jsonPartLength, rawInputModelOf } from './infer-codec.js';
import { requestDeadline } from './request-deadline.js';
import { compressBody, negotiateResponseCoding } from './response-compression.js';
import type { HttpLimits } from './server-options.js';

export const INFER_HEADER_LENGTH = 'inference-header-content-length';

export interface InferRouteContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

export async function handleInfer(
  context: InferRouteContext,
  request: Request,
  modelName: string,
  modelVersion: string | undefined,
): Promise<Response> {
  // Checked first, so a malformed header is refused before the body is read.
  const deadline = requestDeadline(request);
  try {
    return await inferWithin(context, request, modelName, modelVersion, deadline.signal);
  } catch (error) {
    // The core answers CANCELLED for an aborted request; when the deadline did it, say so (504).
    if (deadline.expired() && !request.signal.aborted && error instanceof TesseraError && error.code === 'CANCELLED') {
      throw new TesseraError('DEADLINE_EXCEEDED', 'the request deadline passed', { cause: error });
    }
    throw error;
  } finally {
    deadline.dispose();
  }
}

async function inferWithin(
  context: InferRouteContext,
  request: Request,
  modelName: string,
  modelVersion: string | undefined,
  signal: AbortSignal,
): Promise<Response> {
  const { core, limits } = context;
  const body = await readBody(request, { limit: limits.maxBodySize, limitName: '--http-max-body-size' });
  const headerLength = request.headers.get(INFER_HEADER_LENGTH);

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
  const decoded = decodeInfer({
    body,
    headerLength,
    modelName,
    modelVersion,
    maxJsonInputBytes: limits.maxInputSize,
    ...(rawInputModel === undefined ? {} : { rawInputModel }),
  });

  // The caller's W3C trace context (traceparent/tracestate): the node's spans continue its trace.
  const traceParent = extractTraceContext((name) => request.headers.get(name));
  const response = await core.infer(decoded.request, { signal, ...(traceParent === undefined ? {} : { traceParent }) });
  const encoded = decoded.encode(response);

  const headers: Record<string, string> = { ...encoded.headers, Vary: 'Accept-Encoding' };
  let payload = encoded.body;
  const coding = negotiateResponseCoding(request.headers.get('accept-encoding'));
  if (coding !== undefined) {
    payload = await compressBody(payload, coding);
    headers['Content-Encoding'] = coding;
  }
  // Content-Length is set by the adapter from the (possibly compressed) payload.
  delete headers['Content-Length'];
  delete headers['content-length'];
  return new Response(payload, { status: 200, headers });
}

