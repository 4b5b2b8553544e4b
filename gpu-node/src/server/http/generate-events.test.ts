/**
 * generate_stream's per-token events (generate-events.ts) against the one-object serialization they
 * replace, `JSON.stringify(answer)`, byte for byte, over random tokens: quotes, backslashes, control
 * characters, line separators, non-ASCII, emoji, lone surrogates' bytes and UTF-8 cut mid-character
 * (which must give the very same error), and over names that JSON would order or place differently.
 */
import { describe, expect, it } from 'vitest';
import { encodeBytesElements, type InferResponse, type Tensor } from '../../../../shared/src/tensors/index.js';
import { mulberry32 } from '../../example-models/prng.js';
import { GenerateEvents, singleBytesText } from './generate-events.js';
import { outputFields } from './generate-route.js';

const before = (r: InferResponse): string => JSON.stringify({ model_name: r.modelName, model_version: r.modelVersion, ...outputFields(r) });

const PIECES = ['"', '\\', '\\"', '\u0000', '\u0001', '\u001f', '\b', '\f', '\n', '\r', '\t', '\u007f', '\u0080', '\u2028', '\u2029', 'é', '日本', '😀', '</script>', 'a', ' word', '{"x":1}', '\ud800', '\udfff', '\ufeff', '\ufffd'];

/** Random token bytes: pieces joined (UTF-8), a quarter cut mid-character, some raw bytes. */
function randomTokenBytes(random: () => number): Uint8Array {
  if (random() < 0.05) return Uint8Array.from({ length: 1 + Math.floor(random() * 4) }, () => Math.floor(random() * 256));
  let text = '';
  const n = Math.floor(random() * 4);
  for (let j = 0; j < n; j++) text += PIECES[Math.floor(random() * PIECES.length)];
  const bytes = Buffer.from(text);
  return random() < 0.25 && bytes.length > 1 ? bytes.subarray(0, 1 + Math.floor(random() * (bytes.length - 1))) : bytes;
}

function response(name: string, data: Uint8Array, shape: number[] = [1], modelName = 'm', modelVersion = '1'): InferResponse {
  const output: Tensor = { name, datatype: 'BYTES', shape, data };
  return { id: '', modelName, modelVersion, outputs: [output] };
}

/** The event, or the error message it fails with. */
function outcome(f: () => string): string {
  try {
    return f();
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('GenerateEvents', () => {
  it('gives the bytes of JSON.stringify(answer) for 20,000 random tokens, failures included', () => {
    const random = mulberry32(7);
    const events = new GenerateEvents(before);
    let shortcuts = 0;
    let failures = 0;
    for (let i = 0; i < 20_000; i++) {
      const r = response('text_output', encodeBytesElements([randomTokenBytes(random)]));
      const expected = outcome(() => before(r));
      expect(outcome(() => events.of(r))).toBe(expected);
      if (expected.startsWith('error')) failures += 1;
      else if (singleBytesText(r.outputs[0] as Tensor) !== undefined) shortcuts += 1;
    }
    // Both kinds were exercised: tokens on the shortcut and invalid ones (split UTF-8) that fail alike.
    expect(shortcuts).toBeGreaterThan(10_000);
    expect(failures).toBeGreaterThan(500);
  });

  it('keeps the bytes for output and model names that JSON orders, escapes or places differently', () => {
    const names = ['text_output', 'model_name', 'model_version', '0', '1', '4294967294', '4294967295', '01', '__proto__', 'a"b', 'a\\b', 'é', 'constructor', 'toString', ''];
    const models: [string, string][] = [['m', '1'], ['m"x', '12'], ['é\u0001', '3']];
    for (const [modelName, modelVersion] of models) {
      const events = new GenerateEvents(before);
      for (const name of names) {
        for (const text of ['x', '"\\\u0000é😀']) {
          const r = response(name, encodeBytesElements([text]), [1], modelName, modelVersion);
          expect(events.of(r)).toBe(before(r));
        }
      }
    }
  });

  it('serializes whole what is not one BYTES element: shapes, several elements or outputs, numbers', () => {
    const events = new GenerateEvents(before);
    const cases: InferResponse[] = [
      response('text_output', encodeBytesElements(['a', 'b']), [2]),
      response('text_output', encodeBytesElements(['a']), [1, 1]),
      response('text_output', encodeBytesElements([]), [0]),
      { id: '', modelName: 'm', modelVersion: '1', outputs: [{ name: 'n', datatype: 'INT32', shape: [1], data: new Uint8Array(new Int32Array([5]).buffer) }] },
      {
        id: '',
        modelName: 'm',
        modelVersion: '1',
        outputs: [
          { name: 'a', datatype: 'BYTES', shape: [1], data: encodeBytesElements(['x']) },
          { name: 'b', datatype: 'BYTES', shape: [1], data: encodeBytesElements(['y']) },
        ],
      },
    ];
    for (const r of cases) expect(events.of(r)).toBe(before(r));
    // A length prefix that disagrees with the data is the general path's error, not a shortcut.
    const truncated = response('text_output', encodeBytesElements(['abc']).subarray(0, 6));
    expect(outcome(() => events.of(truncated))).toBe(outcome(() => before(truncated)));
  });
});
