/**
 * The Worker ↔ AdmissionDO protocol for one inference (internal; both ends are this build).
 *
 * Request: `POST https://admission/dispatch`, the InferRequest as a KServe v2 body with binary input
 * sections (shared/src/kserve, so tensors cross without JSON numbers), and the dispatch context in
 * headers: tenant, tier (JSON), absolute deadline (ms since the epoch), model, version, and the value
 * of the model's sticky-version header when the client sent one.
 * Answer: 200 with the InferResponse as a KServe body (binary outputs) and `x-edge-compute-us`; or
 * an error as `{"code", "message", "retryAfterMs"}` with the code's HTTP status, rebuilt into the
 * very TesseraError on the Worker side (so Retry-After survives the hop).
 */
import { ERROR_CODES, TesseraError, httpStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { ErrorCode } from '../../../../shared/src/errors/index.js';
import {
  decodeInferRequestBody,
  decodeInferResponseBody,
  encodeInferRequestBody,
  encodeInferResponse,
  INFERENCE_HEADER_CONTENT_LENGTH,
} from '../../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { Tier, UpstreamInferResult } from '../../core/ports/index.js';

const H = {
  tenant: 'x-edge-tenant',
  tier: 'x-edge-tier',
  deadline: 'x-edge-deadline',
  model: 'x-edge-model',
  version: 'x-edge-version',
  sticky: 'x-edge-sticky',
  computeUs: 'x-edge-compute-us',
} as const;

export interface WireDispatch {
  readonly request: InferRequest;
  readonly tenantId: string;
  readonly tier: Tier;
  readonly deadline: number;
  /** The client's value of the model's sticky-version header, if any. */
  readonly sticky?: string;
}

export function encodeDispatch(dispatch: WireDispatch): { body: Uint8Array; headers: Record<string, string> } {
  const encoded = encodeInferRequestBody({ ...dispatch.request, id: '' }, { binaryInputs: true });
  return {
    body: encoded.body,
    headers: {
      ...encoded.headers,
      [H.tenant]: encodeURIComponent(dispatch.tenantId),
      [H.tier]: encodeURIComponent(JSON.stringify(dispatch.tier)),
      [H.deadline]: String(dispatch.deadline),
      [H.model]: encodeURIComponent(dispatch.request.modelName),
      ...(dispatch.request.modelVersion ? { [H.version]: dispatch.request.modelVersion } : {}),
      ...(dispatch.sticky === undefined ? {} : { [H.sticky]: encodeURIComponent(dispatch.sticky) }),
    },
  };
}

export async function decodeDispatch(request: Request): Promise<WireDispatch> {
  const headers = request.headers;
  const need = (name: string): string => {
    const value = headers.get(name);
    if (value === null) throw TesseraError.invalidArg(`admission dispatch without ${name}`);
    return decodeURIComponent(value);
  };
  const modelName = need(H.model);
  const version = headers.get(H.version) ?? undefined;
  const decoded = decodeInferRequestBody({
    body: new Uint8Array(await request.arrayBuffer()),
    headerLength: headers.get(INFERENCE_HEADER_CONTENT_LENGTH),
    modelName,
    ...(version === undefined ? {} : { modelVersion: version }),
  });
  const sticky = headers.get(H.sticky);
  return {
    request: decoded.request,
    tenantId: need(H.tenant),
    tier: JSON.parse(need(H.tier)) as Tier,
    deadline: Number(need(H.deadline)),
    ...(sticky === null ? {} : { sticky: decodeURIComponent(sticky) }),
  };
}

export function encodeResult(result: UpstreamInferResult): Response {
  const encoded = encodeInferResponse(result.response, { binaryOutputDefault: true });
  return new Response(encoded.body, {
    status: 200,
    headers: { ...encoded.headers, ...(result.computeUs === undefined ? {} : { [H.computeUs]: String(result.computeUs) }) },
  });
}

export async function decodeResult(response: Response): Promise<UpstreamInferResult> {
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) throw decodeWireError(response.status, body);
  const computeUs = response.headers.get(H.computeUs);
  return {
    response: decodeInferResponseBody(body, response.headers.get(INFERENCE_HEADER_CONTENT_LENGTH)),
    ...(computeUs === null ? {} : { computeUs: Number(computeUs) }),
  };
}

export function encodeWireError(error: unknown): Response {
  const e = toTesseraError(error);
  const body = JSON.stringify({ code: e.code, message: e.message, ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs }) });
  return new Response(body, { status: httpStatusOf(e.code), headers: { 'Content-Type': 'application/json' } });
}

function decodeWireError(status: number, body: Uint8Array): TesseraError {
  try {
    const doc = JSON.parse(new TextDecoder().decode(body)) as { code?: unknown; message?: unknown; retryAfterMs?: unknown };
    if (typeof doc.code === 'string' && (ERROR_CODES as readonly string[]).includes(doc.code) && typeof doc.message === 'string') {
      return new TesseraError(doc.code as ErrorCode, doc.message, typeof doc.retryAfterMs === 'number' ? { retryAfterMs: doc.retryAfterMs } : undefined);
    }
  } catch {
    // Not our JSON: an error of the runtime itself (e.g. the object was reset).
  }
  return new TesseraError('UNAVAILABLE', `the admission object answered HTTP ${status}`, { retryAfterMs: 1000 });
}
