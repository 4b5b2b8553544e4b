/**
 * Errors of the gateway's OpenAI-compatible routes in OpenAI's shape, `{"error": {message, type, param,
 * code}}`, with OpenAI's statuses: the official clients read these fields (and `retry-after` on 429),
 * so a /v1 caller never sees Triton's `{"error": "..."}`. Every gateway error maps here: auth (401/403),
 * body limits (400/413), rate and token limits (429), admission (503) and the node's own answers.
 */
import { httpStatusOf, isTesseraError, type TesseraError } from '../../../../shared/src/errors/index.js';
import { OpenAIApiError } from '../../../../shared/src/llm/openai-api-error.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { AuthRejected } from '../auth/index.js';
import { AccessError, PayloadTooLargeError, type HttpAnswer } from '../http/index.js';

export { OpenAIApiError };

const AUTH_CODES: Readonly<Record<string, string>> = {
  missing: 'missing_api_key',
  malformed: 'invalid_api_key',
  unknown_key: 'invalid_api_key',
  disabled: 'account_deactivated',
  forbidden_model: 'model_not_found',
};

function fromTessera(error: TesseraError): OpenAIApiError {
  const status = error instanceof PayloadTooLargeError ? 413 : httpStatusOf(error.code);
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : status === 404 ? 'not_found_error' : 'invalid_request_error';
  const code = status === 429 ? 'rate_limit_exceeded' : null;
  return new OpenAIApiError(status, error.message, type, null, code, error.retryAfterMs);
}

/** Anything thrown, in OpenAI's shape; our own bugs are 500 `server_error` (and logged). */
export function toOpenAIApiError(error: unknown, logger?: Logger): OpenAIApiError {
  if (error instanceof OpenAIApiError) return error;
  if (error instanceof AuthRejected) {
    return new OpenAIApiError(error.status, error.message, error.status === 401 ? 'invalid_request_error' : 'permission_error', null, AUTH_CODES[error.reason] ?? null);
  }
  if (error instanceof AccessError) return new OpenAIApiError(error.status, error.message, error.status === 401 ? 'invalid_request_error' : 'permission_error');
  if (isTesseraError(error)) {
    if (error.code === 'INTERNAL' || error.code === 'BAD_GATEWAY') logger?.error('LLM request failed', { code: error.code, error: error.message });
    return fromTessera(error);
  }
  logger?.error('LLM request failed', { error: String(error), stack: (error as Error | undefined)?.stack });
  return new OpenAIApiError(500, 'the gateway failed to answer the request', 'server_error');
}

export function openAIErrorAnswer(error: unknown, logger?: Logger): HttpAnswer {
  const e = toOpenAIApiError(error, logger);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...e.headers };
  if (e.status === 401) headers['WWW-Authenticate'] = 'Bearer';
  if (e.retryAfterMs !== undefined) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(e.retryAfterMs / 1000)));
    headers['retry-after-ms'] = String(Math.max(0, Math.ceil(e.retryAfterMs)));
  }
  return { status: e.status, headers, body: JSON.stringify(e.body()) };
}
