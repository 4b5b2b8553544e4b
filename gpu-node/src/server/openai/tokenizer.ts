/**
 * Token counting for `usage`, with a real BPE tokenizer (shared/src/llm/token-counter.ts, which the
 * gateway's token limits count with too). A model names its encoding with the config parameter
 * `tokenizer`: `gpt-tokenizer:<encoding>` where encoding is one of ENCODINGS; without it, cl100k_base.
 */
import { DEFAULT_TOKENIZER, ENCODINGS, encodingOf, loadTokenCounter, type TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import { OpenAIApiError } from './openai-error.js';

export { countInPieces, DEFAULT_TOKENIZER, ENCODINGS, MAX_CHARS_PER_TOKEN } from '../../../../shared/src/llm/token-counter.js';
export type { EncodingName, TokenCounter } from '../../../../shared/src/llm/token-counter.js';

/** The counter a `tokenizer` parameter names; a 500 (the model's config is wrong) for anything else. */
export function tokenCounter(spec: string | undefined): Promise<TokenCounter> {
  const name = encodingOf(spec);
  if (name === undefined) {
    const value = spec === undefined || spec === '' ? DEFAULT_TOKENIZER : spec;
    return Promise.reject(
      new OpenAIApiError(500, `the model's tokenizer parameter '${value}' is not one of ${ENCODINGS.map((e) => `gpt-tokenizer:${e}`).join(', ')}`, 'server_error'),
    );
  }
  return loadTokenCounter(name);
}
