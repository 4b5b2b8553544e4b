/**
 * End to end over gRPC: every RPC of inference.GRPCInferenceService plus grpc.health.v1.Health/Check,
 * called by a real grpc-js client whose service definition is built from OUR generated protobuf-es
 * code (shared/src/gen), against a node started on port 0.
 *
 * The node runs in EXPLICIT mode with `--load-model *`, so it serves the example models like a default
 * node and still accepts RepositoryModelLoad/Unload.
 */
import { create } from '@bufbuild/protobuf';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { Metadata, status } from '@grpc/grpc-js';
import type { Client, ClientDuplexStream, MethodDefinition, ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CudaSharedMemoryRegisterRequestSchema,
  CudaSharedMemoryStatusRequestSchema,
  CudaSharedMemoryUnregisterRequestSchema,
  GRPCInferenceService,
  LogSettingsRequestSchema,
  ModelConfigRequestSchema,
  ModelInferRequestSchema,
  ModelMetadataRequestSchema,
  ModelReadyRequestSchema,
  ModelStatisticsRequestSchema,
  RepositoryIndexRequestSchema,
  RepositoryModelLoadRequestSchema,
  RepositoryModelUnloadRequestSchema,
  ServerLiveRequestSchema,
  ServerMetadataRequestSchema,
  ServerReadyRequestSchema,
  SystemSharedMemoryRegisterRequestSchema,
  SystemSharedMemoryStatusRequestSchema,
  SystemSharedMemoryUnregisterRequestSchema,
  TraceSettingRequestSchema,
} from '../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { DataType } from '../../shared/src/gen/model_config_pb.js';
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from '../../shared/src/gen/health_pb.js';
import { callUnary, clientServiceDefinition, type UnaryResult } from '../../shared/src/grpc/index.js';
import { decodeBytesElements, encodeBytesElements } from '../../shared/src/tensors/index.js';
import {
  exampleRepository,
  fp32Bytes,
  fp32Values,
  grpcClient,
  int32Bytes,
  int32Values,
  removeDir,
  startTestNode,
  type TestNode,
} from './support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const health = clientServiceDefinition(Health);

const A = Array.from({ length: 16 }, (_, i) => i * 2);
const B = Array.from({ length: 16 }, (_, i) => 7 - i);
const SUM = A.map((a, i) => a + (B[i] ?? 0));
const DIFF = A.map((a, i) => a - (B[i] ?? 0));

let node: TestNode;
let repo: string | undefined;
let client: Client;

beforeAll(async () => {
  repo = await exampleRepository(['simple', 'simple_identity', 'ts_scale']);
  node = await startTestNode(repo, ['--model-control-mode', 'explicit', '--load-model', '*']);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo);
});

function unary<I extends DescMessage, O>(
  method: MethodDefinition<MessageShape<I>, O>,
  schema: I,
  init: MessageInitShape<I> = {} as MessageInitShape<I>,
  metadata?: Metadata,
): Promise<UnaryResult<O>> {
  return callUnary(client, method, create(schema, init), metadata === undefined ? {} : { metadata });
}

async function expectStatus(promise: Promise<unknown>, code: status, message: RegExp): Promise<ServiceError> {
  const error = (await promise.then(
    (value) => {
      throw new Error(`expected status ${status[code]}, got a response: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    },
    (e: unknown) => e,
  )) as ServiceError;
  expect({ code: status[error.code], details: error.details }).toMatchObject({ code: status[code] });
  expect(error.details).toMatch(message);
  return error;
}

type InferInit = MessageInitShape<typeof ModelInferRequestSchema>;

/** A valid raw ModelInferRequest for `simple`, with some fields replaced. */
function simpleRaw(init: {
  modelName?: string;
  modelVersion?: string;
  id?: string;
  inputs?: InferInit['inputs'];
  rawInputContents?: Uint8Array[];
  parameters?: InferInit['parameters'];
} = {}): InferInit {
  return {
    modelName: 'simple',
    id: 'raw-1',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
    ],
    rawInputContents: [int32Bytes(A), int32Bytes(B)],
    ...init,
  };
}

const infer = (init: InferInit) => unary(svc.modelInfer, ModelInferRequestSchema, init);

describe('server and model RPCs', () => {
  it('ServerLive, ServerReady, Health/Check report a live, ready, SERVING node', async () => {
    expect((await unary(svc.serverLive, ServerLiveRequestSchema)).response.live).toBe(true);
    expect((await unary(svc.serverReady, ServerReadyRequestSchema)).response.ready).toBe(true);
    const check = await callUnary(client, health.check, create(HealthCheckRequestSchema, {}));
    expect(check.response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const named = await callUnary(client, health.check, create(HealthCheckRequestSchema, { service: 'inference.GRPCInferenceService' }));
    expect(named.response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    await expectStatus(callUnary(client, health.check, create(HealthCheckRequestSchema, { service: 'no.Such' })), status.NOT_FOUND, /no\.Such/);
  });

  it('ServerMetadata names the server, version and extensions', async () => {
    const meta = (await unary(svc.serverMetadata, ServerMetadataRequestSchema)).response;
    expect(meta.name).toBe('triton');
    expect(meta.version).toBe('2.73.0dev');
    expect(meta.extensions).toContain('model_repository');
  });

  it('ModelReady: true for a loaded model (with and without version), INVALID_ARGUMENT for an unknown one', async () => {
    expect((await unary(svc.modelReady, ModelReadyRequestSchema, { name: 'simple' })).response.ready).toBe(true);
    expect((await unary(svc.modelReady, ModelReadyRequestSchema, { name: 'simple', version: '1' })).response.ready).toBe(true);
    // Triton's repository manager answers a name it has no identifier of with INVALID_ARG.
    await expectStatus(unary(svc.modelReady, ModelReadyRequestSchema, { name: 'nope' }), status.INVALID_ARGUMENT, /^Request for unknown model: 'nope' is not found$/);
  });

  it('ModelMetadata lists versions, platform and tensors (int64 shapes with -1 batch)', async () => {
    for (const version of ['', '1']) {
      const meta = (await unary(svc.modelMetadata, ModelMetadataRequestSchema, { name: 'simple', version })).response;
      expect(meta.name).toBe('simple');
      expect(meta.versions).toEqual(['1']);
      expect(meta.platform).toBe('onnxruntime_onnx');
      expect(meta.inputs.map((t) => [t.name, t.datatype, t.shape])).toEqual([
        ['INPUT0', 'INT32', [-1n, 16n]],
        ['INPUT1', 'INT32', [-1n, 16n]],
      ]);
      expect(meta.outputs.map((t) => t.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    }
    await expectStatus(unary(svc.modelMetadata, ModelMetadataRequestSchema, { name: 'nope' }), status.INVALID_ARGUMENT, /'nope'/);
    await expectStatus(unary(svc.modelMetadata, ModelMetadataRequestSchema, { name: 'simple', version: '4' }), status.NOT_FOUND, /version 4/);
  });

  it('ModelConfig returns the normalized config message', async () => {
    const config = (await unary(svc.modelConfig, ModelConfigRequestSchema, { name: 'simple' })).response.config;
    expect(config?.name).toBe('simple');
    expect(config?.maxBatchSize).toBe(8);
    expect(config?.input.map((i) => [i.name, i.dataType, i.dims])).toEqual([
      ['INPUT0', DataType.TYPE_INT32, [16n]],
      ['INPUT1', DataType.TYPE_INT32, [16n]],
    ]);
    const ts = (await unary(svc.modelConfig, ModelConfigRequestSchema, { name: 'ts_scale', version: '1' })).response.config;
    expect(ts?.backend).toBe('typescript');
    await expectStatus(unary(svc.modelConfig, ModelConfigRequestSchema, { name: 'nope' }), status.INVALID_ARGUMENT, /'nope'/);
  });
});

describe('ModelInfer', () => {
  it('raw_input_contents in → raw_output_contents out, id echoed, load trailers present', async () => {
    const { response, trailer } = await infer(simpleRaw());
    expect(response).toMatchObject({ modelName: 'simple', modelVersion: '1', id: 'raw-1' });
    expect(response.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
      ['OUTPUT0', 'INT32', [1n, 16n]],
      ['OUTPUT1', 'INT32', [1n, 16n]],
    ]);
    // Triton always answers in raw_output_contents, never in typed contents.
    expect(response.outputs.every((o) => o.contents === undefined)).toBe(true);
    expect(response.rawOutputContents.map(int32Values)).toEqual([SUM, DIFF]);
    expect(trailer.get('tessera-queue-depth')).toEqual([expect.stringMatching(/^\d+$/)]);
    expect(trailer.get('tessera-inflight')).toEqual([expect.stringMatching(/^\d+$/)]);
  });

  it('typed contents (int_contents) in → raw out; only the requested output', async () => {
    const { response } = await infer({
      modelName: 'simple',
      modelVersion: '1',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: A } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: B } },
      ],
      outputs: [{ name: 'OUTPUT1' }],
    });
    expect(response.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(response.rawOutputContents.map(int32Values)).toEqual([DIFF]);
  });

  it('fp32_contents on the typescript backend and bytes_contents on a string model', async () => {
    const ts = await infer({
      modelName: 'ts_scale',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 3n], contents: { fp32Contents: [1, -0.5, 3] } }],
    });
    expect(fp32Values(ts.response.rawOutputContents[0] ?? new Uint8Array())).toEqual([2, -1, 6]);

    const words = ['héllo', 'gRPC'].map((w) => new TextEncoder().encode(w));
    const typed = await infer({
      modelName: 'simple_identity',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2n, 1n], contents: { bytesContents: words } }],
    });
    expect(typed.response.outputs[0]?.datatype).toBe('BYTES');
    expect(decodeBytesElements(typed.response.rawOutputContents[0] ?? new Uint8Array(), 2)).toEqual(words);

    const raw = await infer({
      modelName: 'simple_identity',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2n, 1n] }],
      rawInputContents: [encodeBytesElements(words)],
    });
    expect(decodeBytesElements(raw.response.rawOutputContents[0] ?? new Uint8Array(), 2)).toEqual(words);
  });

  it('FP32 raw input on ts_scale with a batch of 2', async () => {
    const { response } = await infer({
      modelName: 'ts_scale',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2n, 2n] }],
      rawInputContents: [fp32Bytes([1, 2, 3, 4])],
    });
    expect(response.outputs[0]?.shape).toEqual([2n, 2n]);
    expect(fp32Values(response.rawOutputContents[0] ?? new Uint8Array())).toEqual([2, 4, 6, 8]);
  });

  it('bad requests get Triton statuses with messages naming the problem, and still carry load trailers', async () => {
    const unknown = await expectStatus(infer(simpleRaw({ modelName: 'nope' })), status.INVALID_ARGUMENT, /unknown model: 'nope'/);
    expect(unknown.metadata.get('tessera-queue-depth')).toHaveLength(1);
    await expectStatus(infer(simpleRaw({ modelVersion: '3' })), status.NOT_FOUND, /'simple' version 3/);
    const shape = await expectStatus(
      infer(simpleRaw({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1n, 8n] }, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] }], rawInputContents: [int32Bytes(A.slice(0, 8)), int32Bytes(B)] })),
      status.INVALID_ARGUMENT,
      /unexpected shape for input 'INPUT0'/,
    );
    expect(shape.metadata.get('tessera-inflight')).toHaveLength(1);
    await expectStatus(
      infer(simpleRaw({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 16n] }, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] }] })),
      status.INVALID_ARGUMENT,
      /'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'/,
    );
    await expectStatus(
      infer(simpleRaw({ inputs: [{ name: 'INPUTX', datatype: 'INT32', shape: [1n, 16n] }, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] }] })),
      status.INVALID_ARGUMENT,
      /'INPUTX'/,
    );
    await expectStatus(
      infer(simpleRaw({ rawInputContents: [int32Bytes(A).subarray(0, 60), int32Bytes(B)] })),
      status.INVALID_ARGUMENT,
      /INPUT0/,
    );
    // Typed contents and raw_input_contents together.
    await expectStatus(
      infer(simpleRaw({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: A } }, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] }] })),
      status.INVALID_ARGUMENT,
      /contents/,
    );
    // An input with no data at all.
    await expectStatus(
      infer({ modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] }, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: B } }] }),
      status.INVALID_ARGUMENT,
      /INPUT0/,
    );
  });

  // Triton (triton-protocol.md 2.4) and our HTTP path refuse 'triton_' request parameters
  // (triton_enable_empty_final_response excepted); gRPC must too.
  it('a reserved triton_ request parameter → INVALID_ARGUMENT', async () => {
    await expectStatus(
      infer(simpleRaw({ parameters: { triton_nope: { parameterChoice: { case: 'boolParam', value: true } } } })),
      status.INVALID_ARGUMENT,
      /triton_/,
    );
  });
});

describe('ModelStreamInfer', () => {
  function openStream(metadata = new Metadata()): ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse> {
    return client.makeBidiStreamRequest(
      svc.modelStreamInfer.path,
      svc.modelStreamInfer.requestSerialize,
      svc.modelStreamInfer.responseDeserialize,
      metadata,
    );
  }

  /** Writes the requests, half-closes, and collects every response and the final status. */
  function runStream(requests: ModelInferRequest[], metadata?: Metadata) {
    return new Promise<{ responses: ModelStreamInferResponse[]; code: status; details: string }>((resolve) => {
      const stream = openStream(metadata);
      const responses: ModelStreamInferResponse[] = [];
      let failure: ServiceError | undefined;
      stream.on('data', (r: ModelStreamInferResponse) => responses.push(r));
      stream.on('error', (e: ServiceError) => (failure = e));
      stream.on('status', (s: { code: status; details: string }) =>
        // 'status' can come before the last 'error' callback; read the failure on the next turn.
        setImmediate(() => resolve({ responses, code: failure?.code ?? s.code, details: failure?.details ?? s.details })),
      );
      for (const r of requests) stream.write(r);
      stream.end();
    });
  }

  const good = (id: string) => create(ModelInferRequestSchema, simpleRaw({ id }));
  const bad = (id: string) => create(ModelInferRequestSchema, simpleRaw({ id, modelName: 'nope' }));

  it('answers in order; an error travels inside the stream (error_message + identity) and the stream goes on', async () => {
    const { responses, code } = await runStream([good('s1'), bad('s2'), good('s3')]);
    expect(code).toBe(status.OK);
    expect(responses).toHaveLength(3);
    const [first, second, third] = responses;
    expect(first?.errorMessage).toBe('');
    expect(first?.inferResponse?.id).toBe('s1');
    expect((first?.inferResponse?.rawOutputContents ?? []).map(int32Values)).toEqual([SUM, DIFF]);
    expect(second?.errorMessage).toMatch(/unknown model: 'nope'/);
    expect(second?.inferResponse).toMatchObject({ id: 's2', modelName: 'nope' });
    expect(third?.errorMessage).toBe('');
    expect(third?.inferResponse?.id).toBe('s3');
  });

  it('with triton_grpc_error: true the first error ends the stream with a real status', async () => {
    const metadata = new Metadata();
    metadata.set('triton_grpc_error', 'true');
    const { responses, code, details } = await runStream([good('t1'), bad('t2')], metadata);
    expect(status[code]).toBe('INVALID_ARGUMENT');
    expect(details).toMatch(/'nope'/);
    expect(responses.map((r) => r.inferResponse?.id)).toEqual(['t1']);
  });
});

describe('statistics and repository RPCs', () => {
  it('ModelStatistics counts the inferences done, for all models, one model and one version', async () => {
    const before = (await unary(svc.modelStatistics, ModelStatisticsRequestSchema, { name: 'ts_scale' })).response.modelStats[0];
    await infer({ modelName: 'ts_scale', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [3n, 1n] }], rawInputContents: [fp32Bytes([1, 2, 3])] });
    const [all, one, version] = await Promise.all([
      unary(svc.modelStatistics, ModelStatisticsRequestSchema, {}),
      unary(svc.modelStatistics, ModelStatisticsRequestSchema, { name: 'ts_scale' }),
      unary(svc.modelStatistics, ModelStatisticsRequestSchema, { name: 'ts_scale', version: '1' }),
    ]);
    expect(all.response.modelStats.map((s) => s.name).sort()).toEqual(['simple', 'simple_identity', 'ts_scale']);
    const after = one.response.modelStats[0];
    expect(one.response.modelStats).toHaveLength(1);
    expect(after?.version).toBe('1');
    expect((after?.inferenceCount ?? 0n) - (before?.inferenceCount ?? 0n)).toBe(3n);
    expect((after?.inferenceStats?.success?.count ?? 0n) - (before?.inferenceStats?.success?.count ?? 0n)).toBe(1n);
    expect(version.response.modelStats[0]?.inferenceCount).toBe(after?.inferenceCount);
    await expectStatus(
      unary(svc.modelStatistics, ModelStatisticsRequestSchema, { name: 'nope' }),
      status.INVALID_ARGUMENT,
      /requested model 'nope' is not available/,
    );
  });

  it('RepositoryIndex, RepositoryModelUnload and RepositoryModelLoad', async () => {
    const index = (await unary(svc.repositoryIndex, RepositoryIndexRequestSchema, {})).response.models;
    expect(index.map((m) => [m.name, m.version, m.state])).toEqual(
      expect.arrayContaining([
        ['simple', '1', 'READY'],
        ['simple_identity', '1', 'READY'],
        ['ts_scale', '1', 'READY'],
      ]),
    );

    await unary(svc.repositoryModelUnload, RepositoryModelUnloadRequestSchema, { modelName: 'ts_scale' });
    let entry: { state: string; reason: string } | undefined;
    for (let i = 0; i < 200; i++) {
      const models = (await unary(svc.repositoryIndex, RepositoryIndexRequestSchema, {})).response.models;
      entry = models.find((m) => m.name === 'ts_scale');
      if (entry?.state === 'UNAVAILABLE') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(entry).toMatchObject({ state: 'UNAVAILABLE', reason: 'unloaded' });
    const readyOnly = (await unary(svc.repositoryIndex, RepositoryIndexRequestSchema, { ready: true })).response.models;
    expect(readyOnly.map((m) => m.name).sort()).toEqual(['simple', 'simple_identity']);
    await expectStatus(unary(svc.modelReady, ModelReadyRequestSchema, { name: 'ts_scale' }), status.NOT_FOUND, /has no available versions/);

    await unary(svc.repositoryModelLoad, RepositoryModelLoadRequestSchema, { modelName: 'ts_scale' });
    expect((await unary(svc.modelReady, ModelReadyRequestSchema, { name: 'ts_scale' })).response.ready).toBe(true);
    const again = await infer({ modelName: 'ts_scale', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 1n] }], rawInputContents: [fp32Bytes([4])] });
    expect(fp32Values(again.response.rawOutputContents[0] ?? new Uint8Array())).toEqual([8]);

    await expectStatus(
      unary(svc.repositoryModelLoad, RepositoryModelLoadRequestSchema, { modelName: 'ghost' }),
      status.INTERNAL,
      /^failed to load 'ghost', failed to poll from model repository$/,
    );
    // Not in the repository: no entry is left behind, so health stays SERVING.
    expect((await unary(svc.serverReady, ServerReadyRequestSchema)).response.ready).toBe(true);
    const healthCheck = await callUnary(client, health.check, create(HealthCheckRequestSchema, {}));
    expect(healthCheck.response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});

describe('named repositories', () => {
  // A node has one repository: naming another is refused with UNIMPLEMENTED
  // "'repository_name' specification is not supported", as our HTTP routes answer 501.
  it('RepositoryIndex/Load/Unload naming a repository → UNIMPLEMENTED', async () => {
    await expectStatus(
      unary(svc.repositoryIndex, RepositoryIndexRequestSchema, { repositoryName: 'other' }),
      status.UNIMPLEMENTED,
      /'repository_name' specification is not supported/,
    );
    await expectStatus(
      unary(svc.repositoryModelLoad, RepositoryModelLoadRequestSchema, { repositoryName: 'other', modelName: 'simple' }),
      status.UNIMPLEMENTED,
      /'repository_name' specification is not supported/,
    );
  });
});

describe('RPCs Tessera does not implement', () => {
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['SystemSharedMemoryStatus', () => unary(svc.systemSharedMemoryStatus, SystemSharedMemoryStatusRequestSchema), /system shared memory is not supported/],
    ['SystemSharedMemoryRegister', () => unary(svc.systemSharedMemoryRegister, SystemSharedMemoryRegisterRequestSchema, { name: 'r', key: 'k', byteSize: 8n }), /system shared memory is not supported/],
    ['SystemSharedMemoryUnregister', () => unary(svc.systemSharedMemoryUnregister, SystemSharedMemoryUnregisterRequestSchema), /system shared memory is not supported/],
    ['CudaSharedMemoryStatus', () => unary(svc.cudaSharedMemoryStatus, CudaSharedMemoryStatusRequestSchema), /CUDA shared memory is not supported/],
    ['CudaSharedMemoryRegister', () => unary(svc.cudaSharedMemoryRegister, CudaSharedMemoryRegisterRequestSchema, { name: 'r', byteSize: 8n }), /CUDA shared memory is not supported/],
    ['CudaSharedMemoryUnregister', () => unary(svc.cudaSharedMemoryUnregister, CudaSharedMemoryUnregisterRequestSchema), /CUDA shared memory is not supported/],
    ['TraceSetting', () => unary(svc.traceSetting, TraceSettingRequestSchema, { settings: { trace_level: { value: ['TIMESTAMPS'] } } }), /trace extension is not supported/],
    ['LogSettings', () => unary(svc.logSettings, LogSettingsRequestSchema, { settings: { log_info: { parameterChoice: { case: 'boolParam', value: false } } } }), /logging extension is not supported/],
  ];
  it.each(cases)('%s → UNIMPLEMENTED with a message saying what is missing', async (_name, run, message) => {
    await expectStatus(run(), status.UNIMPLEMENTED, message);
  });
});
