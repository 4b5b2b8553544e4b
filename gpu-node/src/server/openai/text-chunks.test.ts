/**
 * The OpenAI streams' text chunks (text-chunks.ts) against JSON.stringify of the chunk object they
 * replace, byte for byte, over random texts (quotes, backslashes, control characters, non-ASCII, emoji,
 * lone surrogates) and over model names that are hostile or hold the marker itself.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../example-models/prng.js';
import { chunk } from './openai-routes.js';
import { TextChunks } from './text-chunks.js';

const PIECES = ['"', '\\', '\u0000', '\u0001', '\u001f', '\n', '\t', '\u007f', '\u2028', 'é', '日本', '😀', '\ud800', '\udc00', 'a', ' word', '"text":"x"'];

function randomText(random: () => number): string {
  let text = '';
  const n = Math.floor(random() * 5);
  for (let i = 0; i < n; i++) text += PIECES[Math.floor(random() * PIECES.length)];
  return text;
}

describe('TextChunks', () => {
  it('gives the bytes of JSON.stringify(chunk) for completions and chat, random texts and names', () => {
    const random = mulberry32(11);
    const names = ['tiny_decoder', 'a"b\\c', 'é😀', '\u0000\u0001tessera-text\u0001\u0000'];
    for (const kind of ['completion', 'chat'] as const) {
      for (const name of names) {
        const of = (text: string) => chunk(kind, 'cmpl-1', 1_700_000_000, name, text, null);
        const chunks = new TextChunks(of);
        for (let i = 0; i < 2_000; i++) {
          const text = randomText(random);
          expect(chunks.of(text)).toBe(JSON.stringify(of(text)));
        }
      }
    }
  });
});
