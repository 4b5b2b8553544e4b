/**
 * Token counting with a real BPE tokenizer (the `gpt-tokenizer` package), shared by the node (usage in
 * its OpenAI answers) and the gateway (token-based limits). An encoding is named `gpt-tokenizer:<name>`;
 * encodings load on first use and are shared by every caller in the process.
 */
import { utf8Length } from './utf8-length.js';

export const ENCODINGS = ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base'] as const;
export type EncodingName = (typeof ENCODINGS)[number];
export const DEFAULT_TOKENIZER = 'gpt-tokenizer:cl100k_base';

export interface TokenCounter {
  count(text: string): number;
  /**
   * A number provably >= `count(text)`, computed without tokenizing (absent: no such bound is known,
   * callers count). The gateway admits a prompt on it and charges the exact count later (token-budget.ts).
   */
  upperBound?(text: string): number;
}

/**
 * The bound of every encoding here: they are byte-level BPE, so each token stands for at least one byte
 * of the text's UTF-8 encoding and the tokens of a piece concatenate to its bytes; special-token text is
 * counted as ordinary text (no special token is ever produced) and countInPieces' pieces split the text,
 * so a count never exceeds the text's UTF-8 length.
 */
export const byteLevelBound = (text: string): number => utf8Length(text);

/**
 * BPE merging costs grow with the square of a pre-tokenized piece's length (a 100 000-letter word takes
 * seconds), and counting runs on an event loop. The tokenizer's pieces never span more than one run of
 * non-space or of space characters (plus one character), so text without a run of LONG_RUN characters
 * is counted whole, exactly; text with one is counted in pieces of at most LONG_RUN characters of each
 * kind: within a few tokens of exact for such pathological text, and linear in its length.
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

/** More characters than this many per token cannot fit a context; callers may refuse before counting. */
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
  // Special-token text in a prompt is counted as ordinary text, never refused.
  const options = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  return { count: (text) => (text === '' ? 0 : countInPieces(text, (piece) => module.encode(piece, options).length)), upperBound: byteLevelBound };
}

/** The encoding a `gpt-tokenizer:<name>` spec names, or undefined when it names none of ENCODINGS. */
export function encodingOf(spec: string | undefined): EncodingName | undefined {
  const value = spec === undefined || spec === '' ? DEFAULT_TOKENIZER : spec;
  const [library, encoding] = value.split(':', 2);
  if (library !== 'gpt-tokenizer' || !(ENCODINGS as readonly string[]).includes(encoding ?? '')) return undefined;
  return encoding as EncodingName;
}

/** The shared counter of one encoding (loaded once). */
export function loadTokenCounter(name: EncodingName): Promise<TokenCounter> {
  let counter = loaded.get(name);
  if (counter === undefined) {
    counter = importEncoding(name);
    loaded.set(name, counter);
  }
  return counter;
}
