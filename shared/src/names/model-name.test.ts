import { describe, expect, it } from 'vitest';
import { assertValidModelName, isValidModelName, MAX_MODEL_NAME_BYTES, modelNameProblem } from './model-name.js';

describe('model names', () => {
  it('accepts plain folder names, dots and non-ASCII letters included', () => {
    for (const name of ['simple', 'densenet_onnx', 'a.b', 'a..b', '.hidden', 'v1-2_3', 'modèle', 'x'.repeat(MAX_MODEL_NAME_BYTES)]) {
      expect(modelNameProblem(name), name).toBeUndefined();
    }
  });

  it('refuses paths, dot segments, control characters, empty and over-long names, naming the problem', () => {
    const cases: [string, RegExp][] = [
      ['', /must not be empty/],
      ['.', /must not be '\.'/],
      ['..', /must not be '\.\.'/],
      ['a/b', /'\/' or '\\'/],
      ['../../tmp/x', /'\/' or '\\'/],
      ['a\\b', /'\/' or '\\'/],
      ['a\0b', /NUL or control/],
      ['a\nb', /NUL or control/],
      ['a\u007fb', /NUL or control/],
      ['a\u0085b', /NUL or control/],
      ['x'.repeat(MAX_MODEL_NAME_BYTES + 1), /at most 255 bytes, got 256/],
      // The bound is in bytes: 128 two-byte letters are 256 bytes.
      ['é'.repeat(128), /at most 255 bytes, got 256/],
    ];
    for (const [name, problem] of cases) {
      expect(isValidModelName(name), JSON.stringify(name)).toBe(false);
      expect(modelNameProblem(name)).toMatch(problem);
    }
  });

  it('assertValidModelName throws INVALID_ARG quoting the name with control characters escaped', () => {
    expect(() => assertValidModelName('a\0/b')).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringMatching(/^invalid model name "a\\u0000\/b": /) }));
    expect(() => assertValidModelName('ok')).not.toThrow();
  });
});
