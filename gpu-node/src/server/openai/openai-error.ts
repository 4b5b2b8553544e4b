/**
 * Errors of the OpenAI-compatible API in OpenAI's own shape: `{"error": {"message", "type", "param",
 * "code"}}` with the HTTP status OpenAI (and vLLM) use. Core errors (TesseraError) are mapped here too,
 * so a /v1 client never sees Triton's `{"error": "..."}`.
 */
import { httpStatusOf, isTesseraError } from '../../../../shared/src/errors/index.js';
import { OpenAIApiError } from '../../../../shared/src/llm/openai-api-error.js';

export { OpenAIApiError };

/** Anything thrown, as an OpenAIApiError: core errors keep their status; other throwables are ours (500). */
export function toOpenAIApiError(error: unknown): OpenAIApiError {
  if (error instanceof OpenAIApiError) return error;
  if (isTesseraError(error)) {
    const status = httpStatusOf(error.code);
    const type = status >= 500 ? 'server_error' : status === 404 ? 'not_found_error' : 'invalid_request_error';
    return new OpenAIApiError(status, error.message, type);
  }
  return new OpenAIApiError(500, error instanceof Error ? error.message : String(error), 'server_error');
}

export function openAIErrorResponse(error: unknown): Response {
  const e = toOpenAIApiError(error);
  return new Response(JSON.stringify(e.body()), { status: e.status, headers: { 'Content-Type': 'application/json' } });
}
