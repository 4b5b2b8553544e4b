/**
 * One ModelInfer through the gateway's infer pipeline (core/app/direct-infer.ts → infer-route.ts):
 * the gRPC request is written as the KServe HTTP body the pipeline reads (binary tensors, every
 * output asked for binary so bytes come back exactly), served by the same `serveInfer` as the HTTP
 * fast path (authentication, tiers, rate limits, admission, deadlines, the response cache, version
 * splits, breakers, tenant-scoped sequences, statistics, metrics, access log), and its answer read
 * back into a ModelInferResponse. Same request, same answer, whichever door it came through.
 */
import type { Deadline, Metadata } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { inferRequestFromProto, inferResponseToProto } from '../../../../shared/src/grpc/index.js';
import { decodeInferResponseBody, encodeInferRequestBody } from '../../../../shared/src/kserve/index.js';
import type { DirectInfer } from '../../core/app/index.js';
import { BodyOverLimitError, type HttpAnswer } from '../../core/http/index.js';
import { headerReader, metadataHeaders, requireModelName, versionOf } from './call-bridge.js';

export const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';
const HEADER_LENGTH = 'inference-header-content-length';

export type FrontInferResult = { readonly ok: true; readonly response: ModelInferResponse; readonly answer: HttpAnswer } | { readonly ok: false; readonly answer: HttpAnswer };

/** Request-side problems (bad tensors, no model name) throw TesseraError before the pipeline runs. */
export async function frontInfer(
  serveInfer: DirectInfer,
  msg: ModelInferRequest,
  call: { readonly metadata: Metadata; getDeadline(): Deadline },
  signal: AbortSignal,
  path = MODEL_INFER_PATH,
): Promise<FrontInferResult> {
  const model = requireModelName(msg.modelName, 'ModelInfer');
  const version = versionOf(msg.modelVersion);
  const request = inferRequestFromProto(msg);
  const outputs = request.outputs?.map((o) => ({ ...o, binaryData: true }));
  const encoded = encodeInferRequestBody({ ...request, ...(outputs === undefined ? {} : { outputs }) }, { binaryInputs: true, binaryDataOutput: true });
  const body = typeof encoded.body === 'string' ? new TextEncoder().encode(encoded.body) : encoded.body;
  const headerLength = headerValue(encoded.headers, HEADER_LENGTH);
  const headers = metadataHeaders(call.metadata, call.getDeadline(), {
    [HEADER_LENGTH]: headerLength ?? String(body.length),
    'content-type': 'application/octet-stream',
  });
  if (headerLength === undefined) headers.delete(HEADER_LENGTH);
  const answer = await serveInfer(
    {
      path,
      headers: headerReader(headers),
      readBody: async (maxBytes) => {
        // The same error as an HTTP body over the limit (readTierBody turns it into the tier's 413).
        if (body.length > maxBytes) throw new BodyOverLimitError(maxBytes, String(body.length));
        return body;
      },
      signal,
    },
    model,
    version,
  );
  if (answer.status !== 200) return { ok: false, answer };
  const bytes = typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : (answer.body ?? new Uint8Array());
  const response = inferResponseToProto(decodeInferResponseBody(bytes, headerValue(answer.headers, HEADER_LENGTH) ?? null));
  return { ok: true, response, answer };
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const key in headers) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}
