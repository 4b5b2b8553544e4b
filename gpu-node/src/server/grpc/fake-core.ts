/**
 * Test double for NodeCore (used only by the tests in this folder): one model, "echo", whose outputs
 * are its inputs renamed OUTPUT<n>; every call is recorded, and infer's behaviour can be swapped.
 */
import { create } from '@bufbuild/protobuf';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { ModelConfigSchema } from '../../../../shared/src/gen/model_config_pb.js';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type {
  InferOptions,
  LoadOptions,
  ModelMetadata,
  ModelStatistics,
  NodeCore,
  RepositoryIndexEntry,
  ServerMetadata,
} from '../../core/index.js';

export const ECHO_MODEL = 'echo';

export function echoResponse(request: InferRequest): InferResponse {
  return {
    id: request.id,
    modelName: request.modelName,
    modelVersion: request.modelVersion ?? '1',
    outputs: request.inputs.map((t, i) => ({ ...t, name: `OUTPUT${i}` })),
  };
}

export function sampleStatistics(): ModelStatistics {
  const d = (count: number, ns: number) => ({ count, ns });
  return {
    name: ECHO_MODEL,
    version: '1',
    last_inference: 1_700_000_000_000,
    inference_count: 12,
    execution_count: 5,
    inference_stats: {
      success: d(10, 5_000_000),
      fail: d(2, 300_000),
      queue: d(10, 1_000_000),
      compute_input: d(5, 200_000),
      compute_infer: d(5, 3_000_000),
      compute_output: d(5, 100_000),
      cache_hit: d(0, 0),
      cache_miss: d(0, 0),
    },
    batch_stats: [{ batch_size: 2, compute_input: d(5, 200_000), compute_infer: d(5, 3_000_000), compute_output: d(5, 100_000) }],
  };
}

export class FakeCore implements NodeCore {
  ready = true;
  load = { queued: 3, inflight: 1 };
  readonly inferCalls: { request: InferRequest; signal: AbortSignal | undefined }[] = [];
  readonly loadCalls: { name: string; options: LoadOptions | undefined }[] = [];
  readonly unloadCalls: { name: string; options: { unloadDependents?: boolean } | undefined }[] = [];
  inferImpl: (request: InferRequest, options?: InferOptions) => Promise<InferResponse> = async (r) => echoResponse(r);
  loadImpl: (name: string) => Promise<void> = async () => {};

  private requireModel(name: string): void {
    if (name !== ECHO_MODEL) throw TesseraError.notFound(`Request for unknown model: '${name}' is not found`);
  }

  isLive(): boolean {
    return true;
  }
  isReady(): boolean {
    return this.ready;
  }
  serverMetadata(): ServerMetadata {
    return { name: 'tessera', version: '0.1.0', extensions: ['classification', 'model_repository', 'statistics'] };
  }
  modelMetadata(name: string): ModelMetadata {
    this.requireModel(name);
    return {
      name,
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, 4] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, 4] }],
    };
  }
  modelConfig(name: string): ModelConfig {
    this.requireModel(name);
    return create(ModelConfigSchema, { name, platform: 'onnxruntime_onnx', maxBatchSize: 8 });
  }
  isModelReady(name: string): boolean {
    return name === ECHO_MODEL;
  }
  infer(request: InferRequest, options?: InferOptions): Promise<InferResponse> {
    this.inferCalls.push({ request, signal: options?.signal });
    if (request.modelName !== ECHO_MODEL) {
      return Promise.reject(TesseraError.notFound(`Request for unknown model: '${request.modelName}' is not found`));
    }
    return this.inferImpl(request, options);
  }
  statistics(name?: string): readonly ModelStatistics[] {
    if (name !== undefined && name !== ECHO_MODEL) {
      throw TesseraError.invalidArg(`requested model '${name}' is not available`);
    }
    return [sampleStatistics()];
  }
  async repositoryIndex(readyOnly: boolean): Promise<readonly RepositoryIndexEntry[]> {
    const all: RepositoryIndexEntry[] = [{ name: ECHO_MODEL, version: '1', state: 'READY' }, { name: 'never_loaded' }];
    return readyOnly ? all.filter((e) => e.state === 'READY') : all;
  }
  async loadModel(name: string, options?: LoadOptions): Promise<void> {
    this.loadCalls.push({ name, options });
    await this.loadImpl(name);
  }
  async unloadModel(name: string, options?: { unloadDependents?: boolean }): Promise<void> {
    this.unloadCalls.push({ name, options });
  }
  modelLoad(name: string): { readonly queued: number; readonly inflight: number } {
    this.requireModel(name);
    return this.load;
  }
}
