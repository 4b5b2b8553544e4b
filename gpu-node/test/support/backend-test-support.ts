/**
 * Helpers for the backend tests: model sources in temp dirs, configs, tensors. Not part of the
 * backends' public API (index.ts does not export it).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { ModelConfigSchema, type ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import { encodeBytesElements, type Datatype, type Tensor } from '../../../shared/src/tensors/index.js';
import type { ExecutionRequest, InstanceSpec, ModelSource } from '../../src/backends/backend.js';

export function modelConfig(init: MessageInitShape<typeof ModelConfigSchema>): ModelConfig {
  return create(ModelConfigSchema, init);
}

export interface TempRepo {
  readonly dir: string;
  /** Writes `<dir>/<model>/1/<file>` and returns the model source. */
  source(config: ModelConfig, file: string, contents: Uint8Array | string): Promise<ModelSource>;
  remove(): Promise<void>;
}

export async function tempRepo(): Promise<TempRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-backends-'));
  return {
    dir,
    async source(config, file, contents) {
      const modelDir = join(dir, config.name);
      const versionDir = join(modelDir, '1');
      await mkdir(versionDir, { recursive: true });
      const modelPath = join(versionDir, file);
      await writeFile(modelPath, contents);
      return { name: config.name, version: 1, modelDir, versionDir, modelPath, config };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export function cpuSpec(name: string, overrides: Partial<InstanceSpec> = {}): InstanceSpec {
  return { name, groupName: name.replace(/_\d+$/, ''), kind: 'cpu', device: -1, auto: false, ...overrides };
}

export function int32Tensor(name: string, shape: number[], values: number[]): Tensor {
  return { name, datatype: 'INT32', shape, data: new Uint8Array(new Int32Array(values).buffer) };
}

export function typedTensor(name: string, datatype: Datatype, shape: number[], view: ArrayBufferView): Tensor {
  return { name, datatype, shape, data: new Uint8Array(view.buffer, view.byteOffset, view.byteLength) };
}

export function bytesTensor(name: string, shape: number[], values: string[]): Tensor {
  return { name, datatype: 'BYTES', shape, data: encodeBytesElements(values) };
}

export function request(inputs: Tensor[], requestedOutputs: string[] = []): ExecutionRequest {
  return { inputs, requestedOutputs, parameters: {} };
}

export function int32Values(tensor: Tensor | undefined): number[] {
  if (tensor === undefined) throw new Error('missing tensor');
  const copy = tensor.data.slice();
  return [...new Int32Array(copy.buffer)];
}
