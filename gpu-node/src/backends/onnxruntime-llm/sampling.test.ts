import { describe, expect, it } from 'vitest';
import { parseSamplingParameters, sampleToken, seededRandom } from './sampling.js';
import { TextStream } from './text-stream.js';

const logits = Float32Array.from([1, 5, 3, 4.5, -2]);

describe('sampler', () => {
  it('greedy picks the largest logit, and never a banned token', () => {
    const greedy = parseSamplingParameters('{}');
    expect(sampleToken(greedy, Math.random, logits, 0, 5)).toBe(1);
    expect(sampleToken(greedy, Math.random, logits, 0, 5, 1)).toBe(3);
  });

  it('top_k 1 is greedy at any temperature; top_k 2 only ever picks the two best', () => {
    const random = seededRandom(1);
    const k1 = parseSamplingParameters('{"temperature": 5, "top_k": 1}');
    const k2 = parseSamplingParameters('{"temperature": 5, "top_k": 2}');
    const picks = new Set<number>();
    for (let i = 0; i < 200; i++) {
      expect(sampleToken(k1, random, logits, 0, 5)).toBe(1);
      picks.add(sampleToken(k2, random, logits, 0, 5));
    }
    expect([...picks].sort()).toEqual([1, 3]);
  });

  it('top_p keeps the smallest set reaching the mass', () => {
    const random = seededRandom(2);
    // At temperature 1, token 1 holds ~0.58 of the mass and token 3 ~0.35: top_p 0.5 keeps token 1 alone.
    const narrow = parseSamplingParameters('{"temperature": 1, "top_p": 0.5}');
    const wide = parseSamplingParameters('{"temperature": 1, "top_p": 0.9}');
    const widePicks = new Set<number>();
    for (let i = 0; i < 300; i++) {
      expect(sampleToken(narrow, random, logits, 0, 5)).toBe(1);
      widePicks.add(sampleToken(wide, random, logits, 0, 5));
    }
    expect([...widePicks].sort()).toEqual([1, 3]);
  });

  it('the same seed draws the same tokens; another seed other ones', () => {
    const params = parseSamplingParameters('{"temperature": 3, "seed": 42}');
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 40 }, () => sampleToken(params, random, logits, 0, 5));
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('reads the vLLM-style keys and refuses malformed ones naming the key', () => {
    expect(parseSamplingParameters('{"max_tokens": 7, "stop": "x", "ignore_eos": true}')).toMatchObject({ maxTokens: 7, stop: ['x'], ignoreEos: true, temperature: 0 });
    expect(() => parseSamplingParameters('{"top_k": 1.5}')).toThrow(/'top_k' must be an integer/);
    expect(() => parseSamplingParameters('{"ignore_eos": "yes"}')).toThrow(/'ignore_eos' must be a boolean/);
    expect(() => parseSamplingParameters('[]')).toThrow(/must be a JSON object/);
  });
});

/** Byte-level decoding as the test model's tokenizer does it: ids are bytes. */
const bytes = { decode: (ids: readonly number[]) => new TextDecoder().decode(Uint8Array.from(ids)) };
const ids = (text: string) => Array.from(new TextEncoder().encode(text));

describe('text stream', () => {
  it('holds a character split across tokens until it is whole', () => {
    const stream = new TextStream(bytes, []);
    const pieces = ids('é!').map((id) => stream.push(id).piece);
    expect(pieces).toEqual(['', 'é', '!']);
  });

  it('stops before a stop string, holding text that may start one, even across tokens', () => {
    const stream = new TextStream(bytes, ['END']);
    const out: string[] = [];
    let stopped = false;
    for (const id of ids('abEbEND more')) {
      const result = stream.push(id);
      out.push(result.piece);
      if (result.stopped) {
        stopped = true;
        break;
      }
    }
    expect(stopped).toBe(true);
    expect(out.join('')).toBe('abEb');
    expect(stream.text).toBe('abEb');
  });

  it('gives out held text at the end when no stop string came', () => {
    const stream = new TextStream(bytes, ['XYZ']);
    const out = ids('abX').map((id) => stream.push(id).piece);
    expect(out.join('')).toBe('ab');
    expect(stream.flush()).toBe('X');
  });
});
