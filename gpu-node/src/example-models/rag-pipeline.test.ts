/**
 * The RAG example's parts without a node: the encoder's arithmetic ranks the passage a question is
 * about first, the query and retriever modules check their inputs, and the pipeline's config names
 * its decoder so that swapping it is a config change.
 */
import { describe, expect, it } from 'vitest';
import { parseModelConfigText } from '../../../shared/src/model-config/index.js';
import { passageText, RAG_CORPUS } from './rag-corpus.js';
import { embedText, ragEncoderWeights } from './rag-encoder.js';
import { ragCorpusJson, ragPipelineConfigText, ragRetrieverConfigText } from './rag-pipeline.js';
// @ts-expect-error: plain JavaScript module without type declarations (it is copied into model folders as is)
import { encoderInput, queryProblem } from './rag-query-model.js';
// @ts-expect-error: plain JavaScript module without type declarations (it is copied into model folders as is)
import { buildPrompt, nearest, promptWithin, readCorpus } from './rag-retriever-model.js';

interface Passage {
  id: string;
  title: string;
  text: string;
  embedding: Float32Array;
}
type Nearest = (corpus: Passage[], query: Float32Array, k: number, floor: number) => { passage: Passage; score: number }[];

const corpus = (readCorpus as (parsed: unknown) => Passage[])(JSON.parse(ragCorpusJson()));
const weights = ragEncoderWeights(RAG_CORPUS.map(passageText));
const search = (question: string, k = 1, floor = 0.25) => (nearest as Nearest)(corpus, embedText(question, weights), k, floor);

describe('retrieval over the bundled corpus', () => {
  it.each([
    ['How does dynamic batching merge requests?', 'dynamic-batching'],
    ['Where are API keys stored?', 'api-keys'],
    ['What happens when a client closes the connection?', 'cancellation'],
    ['prometheus metrics histogram', 'metrics'],
    ['instance group count kind', 'instance-groups'],
  ])('%s → %s', (question, id) => {
    expect(search(question)[0]?.passage.id).toBe(id);
  });

  it('a question about nothing in the corpus finds no passage, and the prompt says so', () => {
    expect(search('zebra giraffe banana', 3)).toEqual([]);
    expect((buildPrompt as (q: string, h: unknown[]) => string)('zebra?', [])).toBe(
      'No passage of the corpus matches the question; say that you do not know.\nQuestion: zebra?\nAnswer:',
    );
  });

  it('returns at most k passages, best first', () => {
    const hits = search('dynamic batching sequence batching requests', 3, -1);
    expect(hits).toHaveLength(3);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
  });
});

describe('the prompt budget (max_prompt_bytes)', () => {
  type Within = (question: string, hits: { passage: { title: string; text: string } }[], limit: number) => string | undefined;
  const within = promptWithin as Within;
  const hit = (title: string, text: string) => ({ passage: { title, text } });
  const bytes = (s: string) => new TextEncoder().encode(s).length;

  it('keeps whole passages, best first, while they fit, and none past the limit', () => {
    const hits = [hit('A', 'alpha '.repeat(10)), hit('B', 'beta '.repeat(10))];
    const all = within('q?', hits, 0) as string;
    expect(all).toContain('[2] B:');
    const limit = bytes(all) - 1;
    const one = within('q?', hits, limit) as string;
    expect(one).toContain('[1] A: alpha');
    expect(one).not.toContain('[2]');
    expect(bytes(one)).toBeLessThanOrEqual(limit);
  });

  it('cuts the best passage short (at a character, marked) when not even it fits, and refuses a question that cannot fit', () => {
    const limit = 120;
    const cut = within('q?', [hit('A', 'é'.repeat(200))], limit) as string;
    expect(bytes(cut)).toBeLessThanOrEqual(limit);
    expect(cut).toMatch(/^Answer the question with the passages below\.\n\[1\] A: é+\.\.\.\nQuestion: q\?\nAnswer:$/);
    expect(within('x'.repeat(200), [hit('A', 'a')], limit)).toBeUndefined();
  });
});

describe('module input checks', () => {
  const problem = queryProblem as (bytes: Uint8Array | undefined, limit: number) => string | undefined;

  it('rag_query refuses missing, oversized, non-UTF-8 and blank questions and pads the rest', () => {
    expect(problem(undefined, 10)).toBe('text_input must hold one string');
    expect(problem(new Uint8Array(11), 10)).toMatch(/text_input is 11 bytes, more than the 10 this pipeline accepts/);
    expect(problem(Uint8Array.of(0xff, 0xfe, 0x41), 10)).toBe('text_input is not valid UTF-8');
    expect(problem(new TextEncoder().encode('  '), 10)).toMatch(/text_input is empty/);
    expect(problem(new TextEncoder().encode('né?'), 10)).toBeUndefined();
    expect(Array.from((encoderInput as (b: Uint8Array) => Uint8Array)(Uint8Array.of(65)))).toEqual([32, 65, 32]);
  });

  it('the retriever refuses a corpus.json that is not what it expects', () => {
    const read = readCorpus as (parsed: unknown) => unknown;
    expect(() => read({ dims: 2, passages: [{ id: 'a', title: 't', text: 'x', embedding: [1] }] })).toThrow(/passage 0 needs id, title, text and an embedding of 2 numbers/);
    expect(() => read([])).toThrow(/corpus.json must be/);
  });
});

describe('configs', () => {
  it('the pipeline is an ensemble with the vLLM-style I/O whose last step is the decoder, tiny_decoder unless told', () => {
    const config = parseModelConfigText(ragPipelineConfigText(), 'rag_pipeline');
    const steps = config.schedulingChoice.case === 'ensembleScheduling' ? config.schedulingChoice.value.step : [];
    expect(steps.map((s) => s.modelName)).toEqual(['rag_query', 'query_encoder', 'retriever', 'tiny_decoder']);
    expect(config.input.filter((i) => i.optional).map((i) => i.name)).toEqual(['stream', 'sampling_parameters', 'exclude_input_in_output', 'top_k']);
    const swapped = parseModelConfigText(ragPipelineConfigText({ decoder: 'token_stream' }), 'rag_pipeline');
    const last = swapped.schedulingChoice.case === 'ensembleScheduling' ? swapped.schedulingChoice.value.step[3] : undefined;
    expect(last?.modelName).toBe('token_stream');
  });

  it("the retriever's top_k input is optional", () => {
    const config = parseModelConfigText(ragRetrieverConfigText(), 'retriever');
    expect(config.input.map((i) => [i.name, i.optional])).toEqual([['embedding', false], ['text_input', false], ['top_k', true]]);
  });
});
