import { describe, expect, it } from 'vitest';
import { matchLlmPostPath } from './llm-path.js';

describe('matchLlmPostPath', () => {
  it('names the OpenAI routes, query or not', () => {
    expect(matchLlmPostPath('/v1/completions')).toEqual({ kind: 'completion' });
    expect(matchLlmPostPath('/v1/chat/completions?x=1')).toEqual({ kind: 'chat' });
  });

  it('names generate and generate_stream with the model decoded and the version as Hono normalizes it', () => {
    expect(matchLlmPostPath('/v2/models/m%20x/generate_stream')).toEqual({ kind: 'generate', streamed: true, model: 'm x', version: undefined });
    expect(matchLlmPostPath('/v2/models/m/versions/007/generate')).toEqual({ kind: 'generate', streamed: false, model: 'm', version: '7' });
  });

  it('leaves to Hono what it is unsure of or does not serve', () => {
    for (const url of [
      '/v1/completions/',
      '/v1/models',
      '/v2/models/m/infer',
      '/v2/models/a%2Fb/generate', // an encoded slash: Hono decides what that model name is
      '/v2/models/%E0%A4%A/generate', // a bad escape
      '/v2/models//generate',
      '/v2/models/m/versions/x/generate',
      '/v2/models/m/generate_stream/',
    ]) {
      expect(matchLlmPostPath(url), url).toBeUndefined();
    }
  });
});
