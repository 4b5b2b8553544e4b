/**
 * An error of an OpenAI-compatible route in OpenAI's own shape, `{"error": {message, type, param, code}}`,
 * with the HTTP status OpenAI (and vLLM) answer with: the official clients read these fields (and
 * `retry-after` on 429). The node's /v1 routes and the gateway's both throw it; each maps its own
 * errors into it (gpu-node/src/server/openai/openai-error.ts, gateway/src/core/llm/openai-error.ts).
 */
export class OpenAIApiError extends Error {
  override readonly name = 'OpenAIApiError';

  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Becomes `retry-after` (seconds) and `retry-after-ms`. */
    readonly retryAfterMs?: number,
    /** More response headers (x-ratelimit-*). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  static invalid(message: string, param: string | null = null, code: string | null = null): OpenAIApiError {
    return new OpenAIApiError(400, message, 'invalid_request_error', param, code);
  }

  /** OpenAI's answer for a model that does not exist or that the key may not use (one message: no existence leak). */
  static modelNotFound(model: string): OpenAIApiError {
    return new OpenAIApiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model', 'model_not_found');
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
