import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without type declarations (it is copied into model folders as is)
import { generatedTokens, samplingParameters, splitTokens } from './token-stream-model.js';
import { tokenStreamConfigText } from './token-stream.js';
import { parseModelConfigText } from '../../../shared/src/model-config/index.js';

type Split = (text: string) => string[];
type Sampling = (text: string | undefined) => { maxTokens: number; stop: string[] };
type Generate = (prompt: string, params: { maxTokens: number; stop: string[] }) => string[];

describe('token_stream', () => {
  it('splits a prompt into tokens that join back into it', () => {
    const text = '  hello   wide\nworld \n';
    expect((splitTokens as Split)(text)).toEqual(['  hello', '   wide', '\nworld', ' \n']);
    expect((splitTokens as Split)(text).join('')).toBe(text);
  });

  it('cuts at max_tokens and before the first token that would complete a stop string', () => {
    const generate = generatedTokens as Generate;
    expect(generate('a b c d', { maxTokens: 2, stop: [] })).toEqual(['a', ' b']);
    expect(generate('a b c d', { maxTokens: Infinity, stop: ['b c'] })).toEqual(['a', ' b']);
    expect(generate('a b', { maxTokens: 0, stop: [] })).toEqual([]);
  });

  it('checks sampling_parameters', () => {
    const parse = samplingParameters as Sampling;
    expect(parse(JSON.stringify({ max_tokens: 3, stop: 'x', temperature: 0.2 }))).toEqual({ maxTokens: 3, stop: ['x'] });
    expect(parse(undefined)).toEqual({ maxTokens: Infinity, stop: [] });
    for (const bad of ['[]', 'nope', '{"max_tokens": -1}', '{"max_tokens": 1.5}', '{"stop": [1]}']) {
      expect(() => parse(bad), bad).toThrow();
    }
  });

  it('has a config the reader parses: decoupled, optional inputs', () => {
    const config = parseModelConfigText(tokenStreamConfigText({ cancelLog: '/tmp/x' }), 'config.pbtxt');
    expect(config.modelTransactionPolicy?.decoupled).toBe(true);
    expect(config.input.map((i) => [i.name, i.optional])).toEqual([
      ['text_input', false],
      ['stream', true],
      ['sampling_parameters', true],
      ['exclude_input_in_output', true],
    ]);
    expect(config.parameters['cancel_log']?.stringValue).toBe('/tmp/x');
  });
});
