/**
 * Token counting for `usage`, with a real BPE tokenizer (the `gpt-tokenizer` package). A model names
 * its encoding with the config parameter `tokenizer`: `gpt-tokenizer:<encoding>` where encoding is one
 * of ENCODINGS; without it, cl100k_base. Encodings load on first use and are shared.
 */
import { OpenAIError } from './openai-error.js';

export const ENCODINGS = ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base'] as const;
export type EncodingName = (typeof ENCODINGS)[number];
export const DEFAULT_TOKENIZER = 'gpt-tokenizer:cl100k_base';

export interface TokenCounter {
  count(text: string): number;
}

/**
 * BPE merging costs grow with the square of a pre-tokenized piece's length (a 100 000-letter word takes
 * seconds), and counting runs on the node's event loop. The tokenizer's pieces never span more than one
 * run of non-space or of space characters (plus one character), so text without a run of LONG_RUN
 * characters is counted whole, exactly; text with one is counted in pieces of at most LONG_RUN
 * characters of each kind: within a few tokens of exact for such pathological text, and linear in its length.
 */
const LONG_RUN = 200;
const HAS_LONG_RUN = new RegExp(`\\S{${LONG_RUN},}|\\s{${LONG_RUN},}`);
const PIECES = new RegExp(`\\s{0,${LONG_RUN - 1}}\\S{1,${LONG_RUN}}|\\s{1,${LONG_RUN}}`, 'g');

export function countInPieces(text: string, encode: (piece: string) => number): number {
  if (!HAS_LONG_RUN.test(text)) return encode(text);
  let total = 0;
  for (const piece of text.match(PIECES) ?? []) total += encode(piece);
  return total;
}

/** More characters than this many per token of the context cannot fit it; callers refuse before counting. */
export const MAX_CHARS_PER_TOKEN = 32;

const loaded = new Map<EncodingName, Promise<TokenCounter>>();

async function importEncoding(name: EncodingName): Promise<TokenCounter> {
  // One static specifier per encoding, so bundlers see them all and no name from a config reaches import().
  const module =
    name === 'cl100k_base'
      ? await import('gpt-tokenizer/encoding/cl100k_base')
      : name === 'o200k_base'
        ? await import('gpt-tokenizer/encoding/o200k_base')
        : name === 'p50k_base'
          ? await import('gpt-tokenizer/encoding/p50k_base')
          : await import('gpt-tokenizer/encoding/r50k_base');
  const options = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  return { count: (text) => countInPieces(text, (piece) => module.encode(piece, options).length) };
}

/** The counter a `tokenizer` parameter names; a 500 (the model's config is wrong) for anything else. */
export function tokenCounter(spec: string | undefined): Promise<TokenCounter> {
  const value = spec === undefined || spec === '' ? DEFAULT_TOKENIZER : spec;
  const [library, encoding] = value.split(':', 2);
  if (library !== 'gpt-tokenizer' || !(ENCODINGS as readonly string[]).includes(encoding ?? '')) {
    return Promise.reject(
      new OpenAIError(500, `the model's tokenizer parameter '${value}' is not one of ${ENCODINGS.map((e) => `gpt-tokenizer:${e}`).join(', ')}`, 'server_error'),
    );
  }
  const name = encoding as EncodingName;
  let counter = loaded.get(name);
  if (counter === undefined) {
    counter = importEncoding(name);
    loaded.set(name, counter);
  }
  return counter;
}
