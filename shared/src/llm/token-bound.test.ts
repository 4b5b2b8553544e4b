import { describe, expect, it } from 'vitest';
import { loadCl100kCounter } from './cl100k-counter.js';
import { ENCODINGS, loadTokenCounter } from './token-counter.js';
import { utf8Length } from './utf8-length.js';

/** Deterministic pseudo-random source (the cases repeat run to run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Strings meant to have as many tokens per byte as the tokenizers allow. */
function hostileTexts(): string[] {
  const next = random(20);
  const texts = [
    '',
    'tell me a story about a gateway',
    '<|endoftext|><|fim_prefix|><|im_start|>system',
    '\u{1F600}\u{1F4A9}\u{10FFFF}',
    '\uD800 lone \uDFFF surrogates \uD83D',
    '\u00e9\u00e8\u0416\u4e2d\u6587\u3042\uac00',
    ' '.repeat(450) + '\n'.repeat(301) + 'x'.repeat(777),
    'a\u0301'.repeat(64),
    '0123456789'.repeat(40),
  ];
  for (let t = 0; t < 60; t++) {
    let text = '';
    const length = 1 + Math.floor(next() * 300);
    for (let i = 0; i < length; i++) {
      const kind = next();
      // ASCII punctuation, Latin-1, BMP, astral and lone surrogates: every UTF-8 length.
      const code =
        kind < 0.3
          ? 0x21 + Math.floor(next() * 94)
          : kind < 0.5
            ? 0x80 + Math.floor(next() * 0x780)
            : kind < 0.75
              ? 0x800 + Math.floor(next() * 0xd000)
              : kind < 0.95
                ? 0x10000 + Math.floor(next() * 0xfffff)
                : 0xd800 + Math.floor(next() * 0x800);
      text += code > 0xffff ? String.fromCodePoint(code) : String.fromCharCode(code);
    }
    texts.push(text);
  }
  return texts;
}

describe('utf8Length', () => {
  it('equals the length TextEncoder writes, lone surrogates included', () => {
    const encoder = new TextEncoder();
    for (const text of hostileTexts()) expect(utf8Length(text)).toBe(encoder.encode(text).length);
  });
});

describe('the token upper bound of the shipped tokenizers', () => {
  it('is never below the exact count, for every encoding and hostile text', async () => {
    const texts = hostileTexts();
    const counters = [await loadCl100kCounter(), ...(await Promise.all(ENCODINGS.map((name) => loadTokenCounter(name))))];
    for (const counter of counters) {
      expect(counter.upperBound).toBeDefined();
      for (const text of texts) expect(counter.upperBound!(text)).toBeGreaterThanOrEqual(counter.count(text));
    }
  });

  it('holds where characters fall apart into byte tokens', async () => {
    const counter = await loadCl100kCounter();
    // Rare astral characters fall apart into byte tokens: the bound is reached, not merely approached.
    const text = '\u{1F9FF}\u{E0041}\u{1D7D8}';
    const count = counter.count(text);
    expect(count).toBeGreaterThan(text.length);
    expect(counter.upperBound!(text)).toBeGreaterThanOrEqual(count);
  });
});
