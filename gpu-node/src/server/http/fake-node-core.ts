/**
 * Test double of NodeCore for the HTTP server's tests: it records every call and answers with canned
 * models. Its `infer` echoes each input back as `<input>_OUT` (so wire round-trips are checkable) unless
 * a test installs its own `inferImpl`. Not used outside tests.
 */
import { create } from '@bufbuild/protobuf';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { ModelConfigSchema, type ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';
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

export interface FakeModel {
  readonly metadata: ModelMetadata;
  readonly config: ModelConfig;
  ready: boolean;
}

export interface RecordedCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

const zero = { count: 0, ns: 0 };

function model(name: string, inputs: ModelMetadata['inputs'], maxBatchSize: number): FakeModel {
  return {
    metadata: {
      name,
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs,
      outputs: inputs.map((input) => ({ ...input, name: `${input.name}_OUT` })),
    },
    config: create(ModelConfigSchema, { name, backend: 'onnxruntime', maxBatchSize }),
    ready: true,
  };
}

export class FakeNodeCore implements NodeCore {
  readonly calls: RecordedCall[] = [];
  live = true;
  ready = true;
  readonly models = new Map<string, FakeModel>([
    ['identity', model('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, 4] }], 8)],
    [
      'pair',
      model(
        'pair',
        [
          { name: 'A', datatype: 'INT32', shape: [-1, 2] },
          { name: 'B', datatype: 'BYTES', shape: [-1, 1] },
        ],
        8,
      ),
    ],
  ]);
  /** Replace to control inference; the default echoes inputs. */
  inferImpl: (request: InferRequest, options?: InferOptions) => Promise<InferResponse> = (request) =>
    Promise.resolve(this.echo(request));

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  isLive(): boolean {
    this.record('isLive');
    return this.live;
  }
  isReady(): boolean {
    this.record('isReady');
    return this.ready;
  }
  serverMetadata(): ServerMetadata {
    this.record('serverMetadata');
    return { name: 'triton', version: '2.73.0dev', extensions: ['binary_tensor_data', 'model_repository'] };
  }
  modelMetadata(name: string, version?: string): ModelMetadata {
    this.record('modelMetadata', name, version);
    return this.find(name, version).metadata;
  }
  modelConfig(name: string, version?: string): ModelConfig {
    this.record('modelConfig', name, version);
    return this.find(name, version).config;
  }
  isModelReady(name: string, version?: string): boolean {
    this.record('isModelReady', name, version);
    return this.find(name, version).ready;
  }
  infer(request: InferRequest, options?: InferOptions): Promise<InferResponse> {
    this.record('infer', request, options);
    this.find(request.modelName, request.modelVersion);
    return this.inferImpl(request, options);
  }
  statistics(name?: string, version?: string): readonly ModelStatistics[] {
    this.record('statistics', name, version);
    const names = name === undefined ? [...this.models.keys()] : [this.find(name, version).metadata.name];
    return names.map((n) => ({
      name: n,
      version: version ?? '1',
      last_inference: 0,
      inference_count: 0,
      execution_count: 0,
      inference_stats: {
        success: zero,
        fail: zero,
        queue: zero,
        compute_input: zero,
        compute_infer: zero,
        compute_output: zero,
        cache_hit: zero,
        cache_miss: zero,
      },
      batch_stats: [],
    }));
  }
  repositoryIndex(readyOnly: boolean): Promise<readonly RepositoryIndexEntry[]> {
    this.record('repositoryIndex', readyOnly);
    return Promise.resolve(
      [...this.models.values()]
        .filter((m) => !readyOnly || m.ready)
        .map((m) => ({ name: m.metadata.name, version: '1', state: m.ready ? ('READY' as const) : ('UNAVAILABLE' as const) })),
    );
  }
  loadModel(name: string, options?: LoadOptions): Promise<void> {
    this.record('loadModel', name, options);
    return Promise.resolve();
  }
  unloadModel(name: string, options?: { unloadDependents?: boolean }): Promise<void> {
    this.record('unloadModel', name, options);
    return Promise.resolve();
  }
  modelLoad(name: string): { readonly queued: number; readonly inflight: number } {
    this.record('modelLoad', name);
    return { queued: 0, inflight: 0 };
  }

  echo(request: InferRequest): InferResponse {
    const wanted = request.outputs?.map((o) => o.name);
    const outputs = request.inputs
      .map((input) => ({ ...input, name: `${input.name}_OUT` }))
      .filter((output) => wanted === undefined || wanted.length === 0 || wanted.includes(output.name));
    return { id: request.id, modelName: request.modelName, modelVersion: request.modelVersion || '1', outputs };
  }

  private find(name: string, version?: string): FakeModel {
    const found = this.models.get(name);
    if (found === undefined) throw TesseraError.notFound(`Request for unknown model: '${name}' is not found`);
    if (version !== undefined && version !== '1') {
      throw TesseraError.notFound(`Request for unknown model: '${name}' version ${version} is not found`);
    }
    return found;
  }

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }
}
