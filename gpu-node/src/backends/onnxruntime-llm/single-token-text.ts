/**
 * A detokenizer that remembers each single token's text. A stream decodes one new token per step in
 * almost every case (text-stream.ts re-reads only the tokens since the last piece), and the tokenizer
 * package's decode pipeline costs a few µs a call, paid per generated token; a token's text alone never
 * changes, so it is computed once. Longer runs of ids (a character split across tokens) go through.
 */
import type { Detokenizer } from './text-stream.js';

/** Most remembered tokens: bounds memory for tokenizers with very large vocabularies. */
const MAX_REMEMBERED = 1 << 17;

export function rememberingSingleTokens(detokenizer: Detokenizer): Detokenizer {
  const texts = new Map<number, string>();
  return {
    decode(ids) {
      if (ids.length !== 1) return detokenizer.decode(ids);
      const id = ids[0] as number;
      let text = texts.get(id);
      if (text === undefined) {
        text = detokenizer.decode(ids);
        if (texts.size < MAX_REMEMBERED) texts.set(id, text);
      }
      return text;
    },
  };
}
