/** What a request asks of the engine (its max_tokens and worst-case KV bytes), or why it can never be served. */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export function requestSize(
  prompt: number,
  requested: number | undefined,
  options: { readonly contextLength: number; readonly kvCacheBytes: number },
  bytesPerToken: number,
): { maxTokens: number; reservedBytes: number } | TesseraError {
  const { contextLength, kvCacheBytes } = options;
  if (prompt === 0) return TesseraError.invalidArg('the prompt is empty: the model needs at least one prompt token');
  if (prompt >= contextLength) return TesseraError.invalidArg(`the prompt is ${prompt} tokens; the model's context is ${contextLength} tokens, prompt included`);
  if (requested !== undefined && prompt + requested > contextLength) {
    return TesseraError.invalidArg(`the prompt (${prompt} tokens) plus max_tokens (${requested}) is more than the model's context of ${contextLength} tokens`);
  }
  const maxTokens = requested ?? contextLength - prompt;
  const reservedBytes = (prompt + maxTokens) * bytesPerToken;
  if (reservedBytes > kvCacheBytes) {
    return TesseraError.invalidArg(
      `the prompt (${prompt} tokens) plus max_tokens (${maxTokens}) needs ${reservedBytes} bytes of KV cache, more than the model's whole kv_cache_bytes (${kvCacheBytes})`,
    );
  }
  return { maxTokens, reservedBytes };
}
