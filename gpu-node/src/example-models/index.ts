/** Example models (ONNX built by our own encoder, plus a typescript-backend module) and their repository writer. */
export * from './onnx-writer.js';
export * from './prng.js';
export * from './config-text.js';
export type { ExampleModel, ExampleModelFile } from './example-model.js';
export * from './simple-models.js';
export * from './mlp-models.js';
export * from './ts-scale.js';
export * from './mlp-pipeline.js';
export * from './silero-vad.js';
export * from './token-stream.js';
export * from './tiny-decoder.js';
export * from './tiny-decoder-onnx.js';
export * from './byte-tokenizer.js';
export * from './example-repository.js';
export { runCli, usage } from './cli.js';
export type { CliIo } from './cli.js';
