/**
 * `rag_pipeline`, the retrieval-augmented generation example: an ensemble with the vLLM-style I/O
 * (so generate, generate_stream, ModelStreamInfer and the OpenAI routes serve it) whose steps are
 *
 *   rag_query (typescript: checks the question, its bytes) → query_encoder (onnxruntime: embedding)
 *   → retriever (typescript: cosine search over the bundled corpus, builds the prompt)
 *   → the decoder (decoupled: streams the answer)
 *
 * The decoder is `tiny_decoder` (the `onnxruntime_llm` backend's example: real arithmetic, gibberish
 * text); any decoupled model with the same vLLM-style I/O takes its place by changing the last step's
 * `model_name` (`ragPipelineConfigText({ decoder })`): `token_stream` echoes its prompt, which shows
 * what was retrieved. tiny_decoder's context is 512 byte tokens, so the retriever keeps the prompt
 * within RAG_PROMPT_BYTES and the pipeline's `context_length` (what the OpenAI routes check the
 * question + max_tokens against) is the rest. A repository serving the pipeline holds all of its
 * models (`npx tessera-models --only rag_query,query_encoder,retriever,tiny_decoder,rag_pipeline`).
 */
import { readFile } from 'node:fs/promises';
import { configText, ensembleSchedulingText } from './config-text.js';
import type { ExampleModel } from './example-model.js';
import { passageText, RAG_CORPUS, type RagPassage } from './rag-corpus.js';
import { embedText, RAG_DIMS, RAG_ENCODER_NAME, ragEncoderWeights } from './rag-encoder.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

export const RAG_PIPELINE_NAME = 'rag_pipeline';
export const RAG_DEFAULT_DECODER = 'tiny_decoder';
/** The retriever's prompt budget (UTF-8 bytes = tiny_decoder's tokens) ... */
export const RAG_PROMPT_BYTES = 384;
/** ... and what is left of tiny_decoder's 512-token context for the question's tokens and the answer. */
export const RAG_ANSWER_TOKENS = 128;
/** The composing models, in step order (the decoder last). */
export const RAG_PIPELINE_STEPS = ['rag_query', RAG_ENCODER_NAME, 'retriever', RAG_DEFAULT_DECODER] as const;

export interface RagPipelineOptions {
  /** The decoupled model answering (vLLM-style I/O); default tiny_decoder. */
  readonly decoder?: string;
}

function moduleFiles(moduleFile: string) {
  // The module's source lives next to this file, so it is linted where it is written.
  const source = new URL(moduleFile, import.meta.url);
  return async () => [
    { path: '1/model.js', contents: await readFile(source, 'utf8') },
    { path: '1/package.json', contents: ESM_PACKAGE_JSON },
  ];
}

const queryModule = moduleFiles('./rag-query-model.js');
const retrieverModule = moduleFiles('./rag-retriever-model.js');

export const ragQueryModel: ExampleModel = {
  name: 'rag_query',
  description: 'checks a question and hands its bytes to query_encoder (rag_pipeline step 0), typescript backend',
  build: async () => [
    {
      path: 'config.pbtxt',
      contents: configText({
        name: 'rag_query',
        backend: 'typescript',
        defaultModelFilename: 'model.js',
        maxBatchSize: 0,
        inputs: [{ name: 'text_input', dataType: 'TYPE_STRING', dims: [1] }],
        outputs: [{ name: 'query_bytes', dataType: 'TYPE_UINT8', dims: [-1] }],
        parameters: { max_query_bytes: '4096' },
      }),
    },
    ...(await queryModule()),
  ],
};

/** corpus.json: the passages with their embeddings, as the retriever reads it. */
export function ragCorpusJson(corpus: readonly RagPassage[] = RAG_CORPUS): string {
  const weights = ragEncoderWeights(corpus.map(passageText));
  const passages = corpus.map((p) => ({ ...p, embedding: Array.from(embedText(passageText(p), weights)) }));
  return JSON.stringify({ dims: RAG_DIMS, passages });
}

/** `maxPromptBytes`: the prompt budget, default RAG_PROMPT_BYTES; 0 for none (a decoder without a small context). */
export function ragRetrieverConfigText(options: { maxPromptBytes?: number } = {}): string {
  // optional: configText has no field for it, and only top_k is optional.
  return configText({
    name: 'retriever',
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: 0,
    inputs: [
      { name: 'embedding', dataType: 'TYPE_FP32', dims: [RAG_DIMS] },
      { name: 'text_input', dataType: 'TYPE_STRING', dims: [1] },
      { name: 'top_k', dataType: 'TYPE_INT32', dims: [1] },
    ],
    outputs: [{ name: 'prompt', dataType: 'TYPE_STRING', dims: [1] }],
    parameters: { top_k: '2', min_score: '0.25', max_prompt_bytes: String(options.maxPromptBytes ?? RAG_PROMPT_BYTES) },
  }).replace(/(name: "top_k"\n {4}data_type: TYPE_INT32\n {4}dims: \[ 1 \])/, '$1\n    optional: true');
}

export const ragRetrieverModel: ExampleModel = {
  name: 'retriever',
  description: `cosine search over ${RAG_CORPUS.length} bundled passages, builds the prompt (rag_pipeline step 2), typescript backend`,
  build: async () => [
    { path: 'config.pbtxt', contents: ragRetrieverConfigText() },
    { path: '1/corpus.json', contents: ragCorpusJson() },
    ...(await retrieverModule()),
  ],
};

export function ragPipelineConfigText(options: RagPipelineOptions = {}): string {
  const decoder = options.decoder ?? RAG_DEFAULT_DECODER;
  const optional = (name: string, type: string) => `  { name: "${name}" data_type: ${type} dims: [ 1 ] optional: true }`;
  return `name: "${RAG_PIPELINE_NAME}"
platform: "ensemble"
max_batch_size: 0
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
${optional('stream', 'TYPE_BOOL')},
${optional('sampling_parameters', 'TYPE_STRING')},
${optional('exclude_input_in_output', 'TYPE_BOOL')},
${optional('top_k', 'TYPE_INT32')}
]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
parameters { key: "tokenizer" value: { string_value: "gpt-tokenizer:cl100k_base" } }
parameters { key: "context_length" value: { string_value: "${RAG_ANSWER_TOKENS}" } }
${ensembleSchedulingText([
    { model: 'rag_query', inputs: { text_input: 'text_input' }, outputs: { query_bytes: 'query_bytes' } },
    { model: RAG_ENCODER_NAME, inputs: { query_bytes: 'query_bytes' }, outputs: { embedding: 'embedding' } },
    { model: 'retriever', inputs: { embedding: 'embedding', text_input: 'text_input', top_k: 'top_k' }, outputs: { prompt: 'prompt' } },
    {
      model: decoder,
      inputs: { text_input: 'prompt', stream: 'stream', sampling_parameters: 'sampling_parameters', exclude_input_in_output: 'exclude_input_in_output' },
      outputs: { text_output: 'text_output' },
    },
  ])}`;
}

export const ragPipelineModel: ExampleModel = {
  name: RAG_PIPELINE_NAME,
  description: `ensemble: rag_query → ${RAG_ENCODER_NAME} → retriever → ${RAG_DEFAULT_DECODER} (streamed answer from retrieved passages)`,
  build: async () => [
    { path: 'config.pbtxt', contents: ragPipelineConfigText() },
    // An ensemble's version folder holds no model file, but it must exist for the version to be served.
    { path: '1/.keep', contents: '' },
  ],
};
