/**
 * Test double of NodeCore for the server layer's tests (HTTP and gRPC alike, and the cross-part gRPC
 * fuzz): canned models, every call recorded, and answers shaped like the real core's (unknown model →
 * NOT_FOUND, statistics of a model without a ready version → INVALID_ARG, version '' = the latest).
 * Its `infer` echoes each input back as `<input>_OUT` (so wire round trips are checkable) unless a
 * test installs its own `inferImpl`; statistics carry distinct non-zero figures so their mapping onto
 * the wire is checkable too. Not used outside tests.
 */
import { create } from '@bufbuild/protobuf';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { ModelConfigSchema, type ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import { DEFAULT_STREAM_INTERVAL, type StreamInterval } from '../../../shared/src/model-config/index.js';
import type { InferRequest, InferResponse } from '../../../shared/src/tensors/index.js';
import { abortSignalOf } from '../../src/server-api/index.js';
import type {
  InferOptions,
  LoadOptions,
  ModelMetadata,
  ModelStatistics,
  NodeCore,
  RepositoryIndexEntry,
  ServerMetadata,
} from '../../src/server-api/index.js';

export interface FakeModel {
  readonly metadata: ModelMetadata;
  readonly config: ModelConfig;
  ready: boolean;
}

export interface RecordedCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

/** One FP32 input `INPUT0` of shape [-1, 4], echoed as `INPUT0_OUT`. */
export const IDENTITY_MODEL = 'identity';

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

/** The figures every model's statistics report, each distinct so a swapped field shows. */
export function sampleStatistics(name: string, version = '1'): ModelStatistics {
  const d = (count: number, ns: number) => ({ count, ns });
  return {
    name,
    version,
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

export class FakeNodeCore implements NodeCore {
  readonly calls: RecordedCall[] = [];
  live = true;
  ready = true;
  /** What `modelLoad` answers for any known model (the load figures in gRPC trailers). */
  load: { queued: number; inflight: number } = { queued: 0, inflight: 0 };
  readonly models = new Map<string, FakeModel>([
    [IDENTITY_MODEL, model(IDENTITY_MODEL, [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, 4] }], 8)],
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
  /** Models the repository holds but never loaded: in the unfiltered index without version or state. */
  readonly neverLoaded: string[] = ['never_loaded'];
  /** Replace to control inference; the default echoes inputs. */
  inferImpl: (request: InferRequest, options?: InferOptions) => Promise<InferResponse> = (request) =>
    Promise.resolve(this.echo(request));
  /** Replace to make loads fail or wait; the default succeeds at once. */
  loadImpl: (name: string, options?: LoadOptions) => Promise<void> = () => Promise.resolve();

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** The infer calls so far, typed. */
  get inferCalls(): { request: InferRequest; signal: AbortSignal | undefined }[] {
    // A gRPC call's cancellation record as the AbortSignal it makes on demand.
    return this.callsOf('infer').map(({ args }) => ({ request: args[0] as InferRequest, signal: abortSignalOf((args[1] as InferOptions | undefined)?.signal) }));
  }

  /** The load calls so far, typed. */
  get loadCalls(): { name: string; options: LoadOptions | undefined }[] {
    return this.callsOf('loadModel').map(({ args }) => ({ name: args[0] as string, options: args[1] as LoadOptions | undefined }));
  }

  /** The unload calls so far, typed. */
  get unloadCalls(): { name: string; options: { unloadDependents?: boolean } | undefined }[] {
    return this.callsOf('unloadModel').map(({ args }) => ({ name: args[0] as string, options: args[1] as { unloadDependents?: boolean } | undefined }));
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
    return { name: 'triton', version: '2.73.0dev', extensions: ['binary_tensor_data', 'model_repository', 'statistics'] };
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
  /** The fake's models have no folder on disk. */
  modelDirectory(name: string, version?: string): string {
    this.find(name, version);
    return `/nonexistent/${name}`;
  }
  /** The fake has no decoupled models. */
  isDecoupled(name: string, version?: string): boolean {
    this.find(name, version);
    return false;
  }

  streamInterval(name: string, version?: string): StreamInterval {
    this.find(name, version);
    return DEFAULT_STREAM_INTERVAL;
  }
  infer(request: InferRequest, options?: InferOptions): Promise<InferResponse> {
    this.record('infer', request, options);
    try {
      this.find(request.modelName, request.modelVersion);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.inferImpl(request, options);
  }
  statistics(name?: string, version?: string): readonly ModelStatistics[] {
    this.record('statistics', name, version);
    if (name === undefined || name === '') return [...this.models.keys()].map((n) => sampleStatistics(n));
    const found = this.models.get(name);
    if (found === undefined || !found.ready || (version !== undefined && version !== '' && version !== '1')) {
      throw TesseraError.invalidArg(`requested model '${name}' is not available`);
    }
    return [sampleStatistics(name, version || '1')];
  }
  repositoryIndex(readyOnly: boolean): Promise<readonly RepositoryIndexEntry[]> {
    this.record('repositoryIndex', readyOnly);
    const loaded: RepositoryIndexEntry[] = [...this.models.values()]
      .filter((m) => !readyOnly || m.ready)
      .map((m) => ({ name: m.metadata.name, version: '1', state: m.ready ? 'READY' : 'UNAVAILABLE' }));
    return Promise.resolve(readyOnly ? loaded : [...loaded, ...this.neverLoaded.map((name) => ({ name }))]);
  }
  loadModel(name: string, options?: LoadOptions): Promise<void> {
    this.record('loadModel', name, options);
    return this.loadImpl(name, options);
  }
  unloadModel(name: string, options?: { unloadDependents?: boolean }): Promise<void> {
    this.record('unloadModel', name, options);
    return Promise.resolve();
  }
  modelLoad(name: string): { readonly queued: number; readonly inflight: number } {
    this.record('modelLoad', name);
    this.find(name);
    return this.load;
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
    if (found === undefined) throw TesseraError.invalidArg(`Request for unknown model: '${name}' is not found`);
    // '' is the latest version, as in the real core.
    if (version !== undefined && version !== '' && version !== '1') {
      throw TesseraError.notFound(`Request for unknown model: '${name}' version ${version} is not found`);
    }
    return found;
  }

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }
}
