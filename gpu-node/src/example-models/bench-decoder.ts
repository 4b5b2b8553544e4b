/**
 * `bench_decoder`: tiny_decoder's layout, tokenizer and config at a size where decoding behaves as it
 * does for the small LLMs users serve. tiny_decoder's ~1 MB of weights stay in the CPU's cache at batch
 * 1, so a decode step costs per position, not per weight, and batching saves little; this one (4
 * layers, hidden 512, ffn 2048: ~11 M parameters, ~45 MB of float32 weights, beyond a core's L2 and
 * this box's 32 MiB L3) makes each step read its weights from memory, which is what continuous batching
 * shares between sequences. Only the llm-batching bench writes it (it takes about a second and 45 MB),
 * so neither `npx tessera-models` nor the test suite pays for it.
 */
import { BYTE_EOS_ID, BYTE_VOCAB_SIZE } from './byte-tokenizer.js';
import type { TinyDecoderSpec } from './tiny-decoder-onnx.js';
import { decoderFiles, TINY_DECODER_CONTEXT, type TinyDecoderConfigOptions } from './tiny-decoder.js';

export const BENCH_DECODER_NAME = 'bench_decoder';
export const BENCH_DECODER_SPEC: TinyDecoderSpec = {
  layers: 4,
  hidden: 512,
  heads: 8,
  kvHeads: 1,
  ffn: 2048,
  vocab: BYTE_VOCAB_SIZE,
  maxPositions: TINY_DECODER_CONTEXT,
  eosId: BYTE_EOS_ID,
  eosBias: -3,
  asciiBias: 6,
};
export const BENCH_DECODER_SEED = 2126;

export function benchDecoderFiles(options: TinyDecoderConfigOptions = {}): { path: string; contents: Uint8Array | string }[] {
  // Weight-bound: one padded run per step reads the weights once (length buckets would re-read them); decode runs
  // of at most 16 rows, the engine's default for such models (tiny_decoder's config, shared here, sets 0).
  return decoderFiles(BENCH_DECODER_SPEC, BENCH_DECODER_SEED, {
    name: BENCH_DECODER_NAME,
    ...options,
    parameters: { length_buckets: 'none', decode_run_rows: '16', ...options.parameters },
  });
}
