import { describe, expect, it } from 'vitest';
import { loadTokenCounter } from '../../../../shared/src/llm/token-counter.js';
import { countPiece, countPieceBytes } from './piece-count.js';

const encoder = new TextEncoder();

describe('countPieceBytes', () => {
  it('equals the tokenizer\'s count for every piece, remembered or not, across slot collisions', async () => {
    const counter = await loadTokenCounter('cl100k_base');
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const alphabet = ['a', 'b', 'e', ' ', 'é', '🙂', '中', '0', '.', 'tok', ' the', ',', 'ing'];
    // 20,000 pieces over 4,096 slots: most slots are overwritten by other pieces many times.
    const pieces = Array.from({ length: 20_000 }, () => {
      let text = '';
      const length = 1 + Math.floor(random() * 6);
      for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)];
      return text;
    });
    for (let round = 0; round < 2; round++) {
      for (const piece of pieces) {
        // The piece inside a larger buffer, as the relay finds it inside an event.
        const bytes = encoder.encode(`{"text":"${piece}"}`);
        const from = 9;
        const to = bytes.length - 2;
        expect(countPieceBytes(counter, bytes, from, to), piece).toBe(counter.count(piece));
      }
    }
  });

  it('counts a piece longer than the memo takes directly, and agrees with countPiece', async () => {
    const counter = await loadTokenCounter('cl100k_base');
    const long = ' a long streamed piece of text, longer than thirty-two bytes';
    const bytes = encoder.encode(long);
    expect(countPieceBytes(counter, bytes, 0, bytes.length)).toBe(counter.count(long));
    expect(countPieceBytes(counter, encoder.encode(' tok'), 0, 4)).toBe(countPiece(counter, ' tok'));
  });
});
