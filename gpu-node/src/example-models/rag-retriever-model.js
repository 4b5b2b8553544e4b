/**
 * `retriever`: the search step of the `rag_pipeline` example ensemble, on the typescript backend. It
 * finds the passages of its corpus nearest to the question and builds the decoder's prompt from them
 * (the prompt-building step lives here, so the pipeline needs no model of its own for it):
 *
 *   inputs   embedding FP32 [DIMS]: the question's unit vector from `query_encoder`
 *            text_input BYTES [1]: the question itself, quoted in the prompt
 *            top_k INT32 [1] (optional): how many passages to use, 1 to the corpus size
 *   output   prompt BYTES [1]: the passages, then the question
 *
 * The corpus is `corpus.json` in the version folder: `{ dims, passages: [{ id, title, text,
 * embedding }] }`, embedded by the example writer with the query encoder's arithmetic. Passages are
 * ranked by cosine similarity (dot products of unit vectors); those under the config parameter
 * `min_score` (default 0.25) are left out, and when none is left the prompt says so. Config parameter
 * `top_k` (default 2) applies when the request has none. A top_k out of range fails with INVALID_ARG.
 * Config parameter `max_prompt_bytes` (default 0: no limit) keeps the prompt within a decoder's context:
 * passages go in best first while they fit whole; when not even the best one fits, it goes in cut short
 * (marked with "..."); a question too long for the budget by itself fails with INVALID_ARG.
 * Module contract: gpu-node/src/backends/typescript/contract.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

let passages = [];
let dims = 0;
let defaultTopK = 2;
let minScore = 0.25;
let maxPromptBytes = 0;
const utf8Length = (text) => Buffer.byteLength(text, 'utf8');
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Checks a parsed corpus.json and returns its passages with Float32Array embeddings. Exported for tests. */
export function readCorpus(parsed) {
  if (parsed === null || typeof parsed !== 'object' || !Number.isSafeInteger(parsed.dims) || !Array.isArray(parsed.passages)) {
    throw new Error('corpus.json must be { dims, passages: [...] }');
  }
  return parsed.passages.map((p, i) => {
    const ok = p !== null && typeof p === 'object' && typeof p.id === 'string' && typeof p.title === 'string' && typeof p.text === 'string';
    if (!ok || !Array.isArray(p.embedding) || p.embedding.length !== parsed.dims || p.embedding.some((v) => typeof v !== 'number')) {
      throw new Error(`corpus.json passage ${i} needs id, title, text and an embedding of ${parsed.dims} numbers`);
    }
    return { id: p.id, title: p.title, text: p.text, embedding: Float32Array.from(p.embedding) };
  });
}

export function initialize(args) {
  const parsed = JSON.parse(readFileSync(join(args.versionDir, 'corpus.json'), 'utf8'));
  passages = readCorpus(parsed);
  dims = parsed.dims;
  defaultTopK = Number(args.parameters.top_k ?? '2');
  minScore = Number(args.parameters.min_score ?? '0.25');
  if (!Number.isSafeInteger(defaultTopK) || defaultTopK < 1) throw new Error(`top_k must be a positive integer, got '${args.parameters.top_k}'`);
  if (!Number.isFinite(minScore)) throw new Error(`min_score must be a number, got '${args.parameters.min_score}'`);
  maxPromptBytes = Number(args.parameters.max_prompt_bytes ?? '0');
  if (!Number.isSafeInteger(maxPromptBytes) || maxPromptBytes < 0) {
    throw new Error(`max_prompt_bytes must be an integer >= 0, got '${args.parameters.max_prompt_bytes}'`);
  }
}

/** The passages nearest to `query` (a unit vector), best first, at most `k`, none under `floor`. Exported for tests. */
export function nearest(corpus, query, k, floor) {
  const scored = corpus.map((passage) => {
    let score = 0;
    for (let i = 0; i < query.length; i++) score += query[i] * passage.embedding[i];
    return { passage, score };
  });
  return scored
    .filter((s) => s.score >= floor)
    .sort((a, b) => b.score - a.score)
    .slice(0, k);
}

const NO_PASSAGE = 'No passage of the corpus matches the question; say that you do not know.';
const WITH_PASSAGES = 'Answer the question with the passages below.';

/** The decoder's prompt: the passages found (or a line saying there are none), then the question. Exported for tests. */
export function buildPrompt(question, hits) {
  const context = hits.length === 0 ? [NO_PASSAGE] : [WITH_PASSAGES, ...hits.map((h, i) => passageLine(i, h.passage.title, h.passage.text))];
  return [...context, `Question: ${question}`, 'Answer:'].join('\n');
}

function passageLine(index, title, text) {
  return `[${index + 1}] ${title}: ${text}`;
}

/**
 * buildPrompt within `limit` UTF-8 bytes (0: none): whole passages, best first, while they fit; else
 * the best one cut short. Undefined when the question alone does not fit. Exported for tests.
 */
export function promptWithin(question, hits, limit) {
  const whole = buildPrompt(question, hits);
  if (limit === 0 || utf8Length(whole) <= limit) return whole;
  if (utf8Length(buildPrompt(question, [])) > limit) return undefined;
  const kept = [];
  for (const hit of hits) {
    if (utf8Length(buildPrompt(question, [...kept, hit])) > limit) break;
    kept.push(hit);
  }
  if (kept.length > 0 || hits.length === 0) return buildPrompt(question, kept);
  // Not even the best passage fits whole: as much of it as fits, cut at a character, marked.
  const best = hits[0].passage;
  const frame = utf8Length(buildPrompt(question, [{ passage: { ...best, text: '...' } }]));
  let text = '';
  for (const char of best.text) {
    if (frame + utf8Length(text + char) > limit) break;
    text += char;
  }
  return buildPrompt(question, [{ passage: { ...best, text: `${text}...` } }]);
}

function retrieve(request) {
  const invalid = (message) => ({ error: `retriever: ${message}`, code: 'INVALID_ARG' });
  const embedding = request.inputs.embedding;
  if (!(embedding?.data instanceof Float32Array) || embedding.data.length !== dims) return invalid(`embedding must be FP32 [${dims}]`);
  if (!embedding.data.every(Number.isFinite)) return invalid('embedding holds a value that is not a finite number');
  const raw = request.inputs.text_input?.data;
  if (raw?.length !== 1) return invalid('text_input must hold one string');
  let question;
  try {
    question = utf8.decode(raw[0]);
  } catch {
    return invalid('text_input is not valid UTF-8');
  }
  let k = defaultTopK;
  const topK = request.inputs.top_k?.data;
  if (topK !== undefined) {
    if (topK.length !== 1) return invalid('top_k must hold one integer');
    k = topK[0];
    if (k < 1 || k > passages.length) return invalid(`top_k must be from 1 to ${passages.length} (the corpus size), got ${k}`);
  }
  const prompt = promptWithin(question, nearest(passages, embedding.data, Math.min(k, passages.length), minScore), maxPromptBytes);
  if (prompt === undefined) return invalid(`the question is too long for a prompt of max_prompt_bytes ${maxPromptBytes}`);
  return { outputs: { prompt: { datatype: 'BYTES', shape: [1], data: [prompt] } } };
}

export function execute(requests) {
  return requests.map(retrieve);
}
