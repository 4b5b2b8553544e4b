import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { OpenAIApiError } from './openai-error.js';
import { countInPieces, tokenCounter } from './tokenizer.js';

const exact = (text: string) => encode(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() }).length;

describe('token counting', () => {
  it('counts ordinary text exactly as the tokenizer does, special-token text included', async () => {
    const counter = await tokenCounter(undefined);
    const text = 'The quick brown fox.\n\nJumps over <|endoftext|> the lazy dog, 12345 times!\n  indented line\n';
    expect(counter.count(text)).toBe(exact(text));
    expect(counter.count('')).toBe(0);
  });

  it('stays linear on a pathological one-word line, and close to the exact count', () => {
    const word = 'ab'.repeat(20_000); // exact counting of this one word is quadratic
    const pieces = countInPieces(word, exact);
    expect(pieces).toBeGreaterThan(word.length / 8);
    expect(pieces).toBeLessThanOrEqual(word.length);
    // 2 MB of it is counted at all within the test's own timeout (the exact way would take hours).
    expect(countInPieces('ab'.repeat(1_000_000), exact)).toBeGreaterThan(0);
  });

  it('refuses tokenizers it does not know as a config error (500)', async () => {
    await expect(tokenCounter('gpt-tokenizer:nope')).rejects.toBeInstanceOf(OpenAIApiError);
    await expect(tokenCounter('tiktoken:cl100k_base')).rejects.toMatchObject({ status: 500 });
    expect((await tokenCounter('gpt-tokenizer:o200k_base')).count('hello world')).toBe(2);
  });
});
