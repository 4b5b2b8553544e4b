/**
 * Errors of the OpenAI-compatible API in OpenAI's own shape: `{"error": {"message", "type", "param",
 * "code"}}` with the HTTP status OpenAI (and vLLM) use. Core errors (TesseraError) are mapped here too,
 * so a /v1 client never sees Triton's `{"error": "..."}`.
 */
import { httpStatusOf, isTesseraError } from '../../../../shared/src/errors/index.js';

export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  static invalid(message: string, param: string | null = null, code: string | null = null): OpenAIError {
    return new OpenAIError(400, message, 'invalid_request_error', param, code);
  }

  static modelNotFound(model: string): OpenAIError {
    return new OpenAIError(404, `The model \`${model}\` does not exist.`, 'invalid_request_error', 'model', 'model_not_found');
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Anything thrown, as an OpenAIError: core errors keep their status; other throwables are ours (500). */
export function toOpenAIError(error: unknown): OpenAIError {
  if (error instanceof OpenAIError) return error;
  if (isTesseraError(error)) {
    const status = httpStatusOf(error.code);
    const type = status >= 500 ? 'server_error' : status === 404 ? 'not_found_error' : 'invalid_request_error';
    return new OpenAIError(status, error.message, type);
  }
  return new OpenAIError(500, error instanceof Error ? error.message : String(error), 'server_error');
}

export function openAIErrorResponse(error: unknown): Response {
  const e = toOpenAIError(error);
  return new Response(JSON.stringify(e.body()), { status: e.status, headers: { 'Content-Type': 'application/json' } });
}
