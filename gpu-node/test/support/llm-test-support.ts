/**
 * Helpers for the onnxruntime_llm tests: the tiny_decoder written to a temp repository with a chosen
 * config, its backend instance, and requests in the vLLM-style I/O.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseModelConfigText } from '../../../shared/src/model-config/parse-text.js';
import { decodeBytesElements, encodeBytesElements, type Tensor } from '../../../shared/src/tensors/index.js';
import type { ExecutionRequest, ExecutionResult, ModelSource } from '../../src/backends/backend.js';
import { LlmInstance } from '../../src/backends/onnxruntime-llm/index.js';
import { tinyDecoderFiles, type TinyDecoderConfigOptions } from '../../src/example-models/tiny-decoder.js';
import { cpuSpec } from './backend-test-support.js';

export interface TinyDecoderRepo {
  readonly dir: string;
  /** Writes tiny_decoder (files may be replaced) under `name` and returns its source. */
  source(options?: TinyDecoderConfigOptions, replace?: Readonly<Record<string, Uint8Array | string>>): Promise<ModelSource>;
  remove(): Promise<void>;
}

export async function tinyDecoderRepo(): Promise<TinyDecoderRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-llm-'));
  let count = 0;
  return {
    dir,
    async source(options = {}, replace = {}) {
      const name = options.name ?? `tiny_decoder_${count++}`;
      const modelDir = join(dir, name);
      for (const file of tinyDecoderFiles({ ...options, name })) {
        const path = join(modelDir, file.path);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, replace[file.path] ?? file.contents);
      }
      const config = parseModelConfigText(await import('node:fs/promises').then((fs) => fs.readFile(join(modelDir, 'config.pbtxt'), 'utf8')), 'config.pbtxt');
      const versionDir = join(modelDir, '1');
      return { name, version: 1, modelDir, versionDir, modelPath: join(versionDir, 'model.onnx'), config };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export function startLlm(source: ModelSource): Promise<LlmInstance> {
  return LlmInstance.start(source, cpuSpec(`${source.name}_0`));
}

export interface Generated {
  readonly pieces: string[];
  readonly text: string;
  readonly result: ExecutionResult;
}

function textOf(tensor: Tensor | undefined): string {
  if (tensor === undefined) return '';
  return new TextDecoder().decode(decodeBytesElements(tensor.data, undefined, 'text_output')[0]);
}

/** Runs one streamed request through the instance and collects its pieces. */
export async function generate(instance: LlmInstance, prompt: string, sampling: object, options: { signal?: AbortSignal; stream?: boolean; priority?: number; onPiece?: (n: number) => void; onFinal?: () => void } = {}): Promise<Generated> {
  const pieces: string[] = [];
  const inputs: Tensor[] = [
    { name: 'text_input', datatype: 'BYTES', shape: [1], data: encodeBytesElements([prompt]) },
    { name: 'stream', datatype: 'BOOL', shape: [1], data: new Uint8Array([options.stream === false ? 0 : 1]) },
    { name: 'sampling_parameters', datatype: 'BYTES', shape: [1], data: encodeBytesElements([JSON.stringify(sampling)]) },
    { name: 'exclude_input_in_output', datatype: 'BOOL', shape: [1], data: new Uint8Array([1]) },
  ];
  const request: ExecutionRequest = {
    inputs,
    requestedOutputs: [],
    parameters: options.priority === undefined ? {} : { priority: options.priority },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onResponse: (outputs, final) => {
      const piece = textOf(outputs[0]);
      if (outputs.length > 0) pieces.push(piece);
      options.onPiece?.(pieces.length);
      if (final === true) options.onFinal?.();
    },
  };
  const batch = await instance.execute([request]);
  return { pieces, text: pieces.join(''), result: batch.results[0] as ExecutionResult };
}
