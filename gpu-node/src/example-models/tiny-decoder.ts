/**
 * `tiny_decoder`: the project's own decoder model for the onnxruntime_llm backend — a 4-layer decoder
 * (4 query heads sharing one key/value head) in the cached-attention ONNX layout (tiny-decoder-onnx.ts) with seeded weights and a byte-level
 * tokenizer.json (byte-tokenizer.ts), so generation, continuous batching and the OpenAI API can be
 * tested and benchmarked with no download. Its text is gibberish; its arithmetic is real.
 */
import { BYTE_EOS_ID, BYTE_VOCAB_SIZE, byteTokenizerConfigJson, byteTokenizerJson } from './byte-tokenizer.js';
import type { ExampleModel } from './example-model.js';
import { ROLE_TAG_CHAT_TEMPLATE, textModelConfigText } from './llm-config-text.js';
import { buildTinyDecoderOnnx, type TinyDecoderSpec } from './tiny-decoder-onnx.js';

export const TINY_DECODER_NAME = 'tiny_decoder';
export const TINY_DECODER_CONTEXT = 512;
export const TINY_DECODER_SPEC: TinyDecoderSpec = {
  layers: 4,
  hidden: 128,
  heads: 4,
  kvHeads: 1,
  ffn: 512,
  vocab: BYTE_VOCAB_SIZE,
  maxPositions: TINY_DECODER_CONTEXT,
  eosId: BYTE_EOS_ID,
  eosBias: -3,
  asciiBias: 6,
};
export const TINY_DECODER_SEED = 21;
export const TINY_DECODER_LENGTH_BUCKETS = '64,128,256';

/** The chat template: role tags, as token_stream's. */
export const TINY_DECODER_CHAT_TEMPLATE = ROLE_TAG_CHAT_TEMPLATE;

export interface TinyDecoderConfigOptions {
  readonly name?: string;
  readonly maxNumSeqs?: number;
  readonly kvCacheBytes?: number;
  readonly admission?: 'wait' | 'reject';
  readonly maxQueueSize?: number;
  /** More config parameters, as is. */
  readonly parameters?: Readonly<Record<string, string>>;
}

export function tinyDecoderConfigText(options: TinyDecoderConfigOptions = {}): string {
  const parameters: Record<string, string> = {
    context_length: String(TINY_DECODER_CONTEXT),
    max_num_seqs: String(options.maxNumSeqs ?? 32),
    kv_cache_bytes: String(options.kvCacheBytes ?? 64 * 1024 * 1024),
    admission: options.admission ?? 'wait',
    chat_template: 'chat_template.jinja',
    // ~1 MB of weights stay in cache, so a step costs per cached position: length buckets pay here.
    length_buckets: TINY_DECODER_LENGTH_BUCKETS,
    // Its bucket runs take ~1-2 ms, so a newcomer waits little for one; cutting them further pays ~0.2 ms of
    // fixed cost per extra run for nothing (docs/benchmarks.md, fifth pass).
    decode_run_rows: '0',
    ...(options.maxQueueSize === undefined ? {} : { max_queue_size: String(options.maxQueueSize) }),
    ...options.parameters,
  };
  return textModelConfigText({
    name: options.name ?? TINY_DECODER_NAME,
    backend: 'onnxruntime_llm',
    defaultModelFilename: 'model.onnx',
    instanceCount: 1,
    parameters,
  });
}

export function tinyDecoderFiles(options: TinyDecoderConfigOptions = {}): { path: string; contents: Uint8Array | string }[] {
  return decoderFiles(TINY_DECODER_SPEC, TINY_DECODER_SEED, options);
}

/** A decoder of this layout and tokenizer with any spec (bench-decoder.ts); the spec's context must be TINY_DECODER_CONTEXT. */
export function decoderFiles(spec: TinyDecoderSpec, seed: number, options: TinyDecoderConfigOptions = {}): { path: string; contents: Uint8Array | string }[] {
  return [
    { path: 'config.pbtxt', contents: tinyDecoderConfigText(options) },
    { path: 'chat_template.jinja', contents: TINY_DECODER_CHAT_TEMPLATE },
    { path: '1/model.onnx', contents: buildTinyDecoderOnnx(spec, seed) },
    { path: '1/tokenizer.json', contents: byteTokenizerJson() },
    { path: '1/tokenizer_config.json', contents: byteTokenizerConfigJson() },
  ];
}

export const tinyDecoderModel: ExampleModel = {
  name: TINY_DECODER_NAME,
  description: 'small seeded decoder (ONNX, KV-cache layout) + byte-level tokenizer.json for the onnxruntime_llm backend',
  build: () => Promise.resolve(tinyDecoderFiles()),
};
