import { create, toBinary } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Client, Metadata, credentials, status } from '@grpc/grpc-js';
import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  GRPCInferenceService,
  InferParameterSchema,
  InferTensorContentsSchema,
  ModelConfigRequestSchema,
  ModelInferRequestSchema,
  ModelMetadataRequestSchema,
  ModelReadyRequestSchema,
  ModelRepositoryParameterSchema,
  ModelStatisticsRequestSchema,
  RepositoryIndexRequestSchema,
  RepositoryModelLoadRequestSchema,
  RepositoryModelUnloadRequestSchema,
  ServerLiveRequestSchema,
  ServerMetadataRequestSchema,
  ServerReadyRequestSchema,
  SystemSharedMemoryStatusRequestSchema,
  TraceSettingRequestSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from '../../../../shared/src/gen/health_pb.js';
import { callUnary, clientServiceDefinition } from '../../../../shared/src/grpc/index.js';
import { FakeNodeCore, IDENTITY_MODEL } from '../../../test/support/fake-node-core.js';
import { createGrpcServer } from './index.js';
import type { GrpcServer } from './index.js';
import { abortSignalOf } from '../../server-api/index.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const health = clientServiceDefinition(Health);

/** The node's gRPC server, every RPC with grpc-js clients; run on grpc-js's own port and on the raw HTTP/2 front. */
export function grpcServerSuite(rawH2Front: boolean): void {
  const core = new FakeNodeCore();
  // The queue figures the load trailers must carry.
  core.load = { queued: 3, inflight: 1 };
  let server: GrpcServer;
  let client: Client;

  beforeAll(async () => {
    server = createGrpcServer(core, { maxInflightPerStream: 4, rawH2Front });
    const { port } = await server.listen(0, '127.0.0.1');
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await server.close(1000);
  });

  afterEach(() => {
    core.ready = true;
    core.calls.length = 0;
    core.inferImpl = (r) => Promise.resolve(core.echo(r));
    core.loadImpl = async () => {};
  });

  function fp32(values: number[]): Uint8Array {
    return new Uint8Array(new Float32Array(values).buffer);
  }

  function rawRequest(overrides: MessageInitShape<typeof ModelInferRequestSchema> = {}): ModelInferRequest {
    return create(ModelInferRequestSchema, {
      modelName: IDENTITY_MODEL,
      id: 'req-1',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 4n] }],
      rawInputContents: [fp32([1, 2, 3, 4])],
      ...overrides,
    });
  }

  async function expectStatus(promise: Promise<unknown>, code: number, message?: RegExp): Promise<ServiceError> {
    const err = (await promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (e: unknown) => e,
    )) as ServiceError;
    expect(err.code).toBe(code);
    if (message) expect(err.details).toMatch(message);
    return err;
  }


  describe('server, model and repository RPCs', () => {
    it('answers live, ready and server metadata', async () => {
      expect((await callUnary(client, svc.serverLive, create(ServerLiveRequestSchema))).response.live).toBe(true);
      expect((await callUnary(client, svc.serverReady, create(ServerReadyRequestSchema))).response.ready).toBe(true);
      core.ready = false;
      expect((await callUnary(client, svc.serverReady, create(ServerReadyRequestSchema))).response.ready).toBe(false);
      const meta = (await callUnary(client, svc.serverMetadata, create(ServerMetadataRequestSchema))).response;
      expect(meta.name).toBe('triton');
      expect(meta.extensions).toContain('statistics');
    });

    it('answers model ready, metadata and config, and INVALID_ARGUMENT for unknown models', async () => {
      const ready = await callUnary(client, svc.modelReady, create(ModelReadyRequestSchema, { name: IDENTITY_MODEL }));
      expect(ready.response.ready).toBe(true);
      // Triton answers an unknown model with INVALID_ARG (its repository manager has no such name), as the real core does.
      await expectStatus(callUnary(client, svc.modelReady, create(ModelReadyRequestSchema, { name: 'nope' })), status.INVALID_ARGUMENT, /'nope'/);

      const meta = (await callUnary(client, svc.modelMetadata, create(ModelMetadataRequestSchema, { name: IDENTITY_MODEL })))
        .response;
      expect(meta.platform).toBe('onnxruntime_onnx');
      expect(meta.inputs[0]?.shape).toEqual([-1n, 4n]);
      expect(meta.inputs[0]?.datatype).toBe('FP32');

      const config = (await callUnary(client, svc.modelConfig, create(ModelConfigRequestSchema, { name: IDENTITY_MODEL })))
        .response;
      expect(config.config?.maxBatchSize).toBe(8);

      await expectStatus(
        callUnary(client, svc.modelMetadata, create(ModelMetadataRequestSchema, { name: 'nope' })),
        status.INVALID_ARGUMENT,
        /unknown model: 'nope'/,
      );
    });

    it('answers statistics with the core numbers, and INVALID_ARGUMENT for an unavailable model', async () => {
      const stats = (await callUnary(client, svc.modelStatistics, create(ModelStatisticsRequestSchema, {}))).response;
      const s = stats.modelStats[0];
      expect(s?.name).toBe(IDENTITY_MODEL);
      expect(s?.inferenceCount).toBe(12n);
      expect(s?.executionCount).toBe(5n);
      expect(s?.inferenceStats?.success?.ns).toBe(5_000_000n);
      expect(s?.inferenceStats?.fail?.count).toBe(2n);
      expect(s?.batchStats[0]?.batchSize).toBe(2n);
      await expectStatus(
        callUnary(client, svc.modelStatistics, create(ModelStatisticsRequestSchema, { name: 'nope' })),
        status.INVALID_ARGUMENT,
        /'nope' is not available/,
      );
    });

    it('indexes, loads (config + raw file bytes) and unloads', async () => {
      const index = (await callUnary(client, svc.repositoryIndex, create(RepositoryIndexRequestSchema, { ready: false })))
        .response;
      expect(index.models.map((m) => [m.name, m.state])).toEqual([
        [IDENTITY_MODEL, 'READY'],
        ['pair', 'READY'],
        ['never_loaded', ''],
      ]);

      const file = new Uint8Array([0, 1, 2, 255]);
      await callUnary(
        client,
        svc.repositoryModelLoad,
        create(RepositoryModelLoadRequestSchema, {
          modelName: IDENTITY_MODEL,
          parameters: {
            config: create(ModelRepositoryParameterSchema, { parameterChoice: { case: 'stringParam', value: '{}' } }),
            'file:1/model.onnx': create(ModelRepositoryParameterSchema, {
              parameterChoice: { case: 'bytesParam', value: file },
            }),
          },
        }),
      );
      const loaded = core.loadCalls.at(-1);
      expect(loaded?.options?.configJson).toBe('{}');
      expect(loaded?.options?.files?.get('1/model.onnx')).toEqual(file);

      core.loadImpl = async () => {
        throw TesseraError.unavailable('explicit model load / unload is not allowed if polling is enabled');
      };
      await expectStatus(
        callUnary(client, svc.repositoryModelLoad, create(RepositoryModelLoadRequestSchema, { modelName: 'x' })),
        status.UNAVAILABLE,
        /not allowed/,
      );
      await expectStatus(
        callUnary(
          client,
          svc.repositoryModelLoad,
          create(RepositoryModelLoadRequestSchema, {
            modelName: 'x',
            parameters: { config: create(ModelRepositoryParameterSchema, { parameterChoice: { case: 'boolParam', value: true } }) },
          }),
        ),
        status.INVALID_ARGUMENT,
        /'config' must be a string_param/,
      );

      await callUnary(
        client,
        svc.repositoryModelUnload,
        create(RepositoryModelUnloadRequestSchema, {
          modelName: IDENTITY_MODEL,
          parameters: {
            unload_dependents: create(ModelRepositoryParameterSchema, { parameterChoice: { case: 'boolParam', value: true } }),
          },
        }),
      );
      expect(core.unloadCalls.at(-1)).toEqual({ name: IDENTITY_MODEL, options: { unloadDependents: true } });
    });

    it('answers UNIMPLEMENTED with a clear message for shared memory and trace', async () => {
      await expectStatus(
        callUnary(client, svc.systemSharedMemoryStatus, create(SystemSharedMemoryStatusRequestSchema)),
        status.UNIMPLEMENTED,
        /shared memory is not supported/,
      );
      await expectStatus(
        callUnary(client, svc.traceSetting, create(TraceSettingRequestSchema)),
        status.UNIMPLEMENTED,
        /trace extension/,
      );
    });

    it('answers INVALID_ARGUMENT, not INTERNAL, to bytes that are not the request message', async () => {
      const garbage = { ...svc.modelReady, requestSerialize: (b: Buffer) => b };
      await expectStatus(callUnary(client, garbage as never, Buffer.from([0x0a, 0xff, 0xff, 0xff])), status.INVALID_ARGUMENT, /malformed inference.ModelReadyRequest/);
      const check = { ...health.check, requestSerialize: (b: Buffer) => b };
      await expectStatus(callUnary(client, check as never, Buffer.from([0x0a, 0xff])), status.INVALID_ARGUMENT, /malformed grpc.health.v1.HealthCheckRequest/);
    });

    it('maps a thrown core error to its status (an unloadable model)', async () => {
      core.loadImpl = () => Promise.reject(TesseraError.unavailable('no room for the model'));
      await expectStatus(callUnary(client, svc.repositoryModelLoad, create(RepositoryModelLoadRequestSchema, { modelName: IDENTITY_MODEL })), status.UNAVAILABLE, /no room/);
    });
  });

  describe('health', () => {
    it('reports SERVING, NOT_SERVING and NOT_FOUND for unknown services', async () => {
      const check = (service: string) => callUnary(client, health.check, create(HealthCheckRequestSchema, { service }));
      expect((await check('')).response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect((await check('inference.GRPCInferenceService')).response.status).toBe(
        HealthCheckResponse_ServingStatus.SERVING,
      );
      core.ready = false;
      expect((await check('')).response.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
      await expectStatus(check('other.Service'), status.NOT_FOUND, /unknown service/);
    });
  });

  describe('ModelInfer', () => {
    it('answers raw inputs with raw outputs and load trailers', async () => {
      const { response, trailer } = await callUnary(client, svc.modelInfer, rawRequest());
      expect(response.id).toBe('req-1');
      expect(response.modelName).toBe(IDENTITY_MODEL);
      expect(response.outputs[0]).toMatchObject({ name: 'INPUT0_OUT', datatype: 'FP32', shape: [1n, 4n] });
      expect(response.outputs[0]?.contents).toBeUndefined();
      expect(response.rawOutputContents[0]).toEqual(fp32([1, 2, 3, 4]));
      expect(trailer.get('tessera-queue-depth')).toEqual(['3']);
      expect(trailer.get('tessera-inflight')).toEqual(['1']);
    });

    it('turns typed contents into the same raw bytes and passes parameters through', async () => {
      await callUnary(
        client,
        svc.modelInfer,
        rawRequest({
          rawInputContents: [],
          inputs: [
            {
              name: 'INPUT0',
              datatype: 'FP32',
              shape: [1n, 4n],
              contents: create(InferTensorContentsSchema, { fp32Contents: [1, 2, 3, 4] }),
            },
          ],
          parameters: {
            priority: create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value: 2n } }),
            tag: create(InferParameterSchema, { parameterChoice: { case: 'stringParam', value: 'x' } }),
          },
        }),
      );
      const seen = core.inferCalls.at(-1)?.request;
      expect(seen?.inputs[0]?.data).toEqual(fp32([1, 2, 3, 4]));
      expect(seen?.parameters).toEqual({ priority: 2, tag: 'x' });
    });

    it('rejects raw and typed contents together, FP16 in typed contents and bad sizes, with trailers', async () => {
      const both = rawRequest();
      both.inputs[0]!.contents = create(InferTensorContentsSchema, { fp32Contents: [1, 2, 3, 4] });
      const err = await expectStatus(
        callUnary(client, svc.modelInfer, both),
        status.INVALID_ARGUMENT,
        /contents field must not be specified when using raw_input_contents/,
      );
      expect(err.metadata.get('tessera-queue-depth')).toEqual(['3']);

      const fp16 = rawRequest({ rawInputContents: [] });
      fp16.inputs[0]!.datatype = 'FP16';
      fp16.inputs[0]!.contents = create(InferTensorContentsSchema, { fp32Contents: [1, 2, 3, 4] });
      await expectStatus(callUnary(client, svc.modelInfer, fp16), status.INVALID_ARGUMENT, /FP16.*raw_input_contents/);

      await expectStatus(
        callUnary(client, svc.modelInfer, rawRequest({ rawInputContents: [fp32([1, 2, 3])] })),
        status.INVALID_ARGUMENT,
        /unexpected total byte size 12 for input 'INPUT0', expecting 16/,
      );
      expect(core.inferCalls).toHaveLength(0);
    });

    it('maps core errors to their status and still sends trailers', async () => {
      const err = await expectStatus(
        callUnary(client, svc.modelInfer, rawRequest({ modelName: 'nope' })),
        status.INVALID_ARGUMENT,
        /unknown model/,
      );
      expect(err.metadata.get('tessera-inflight')).toEqual(['0']);
      core.inferImpl = async () => {
        throw new RangeError('backend exploded');
      };
      await expectStatus(callUnary(client, svc.modelInfer, rawRequest()), status.INTERNAL, /backend exploded/);
    });

    it('answers INVALID_ARGUMENT, not INTERNAL, to bytes that are not a ModelInferRequest', async () => {
      const garbage = { ...svc.modelInfer, requestSerialize: (b: Buffer) => b };
      await expectStatus(
        callUnary(client, garbage as never, Buffer.from([0x0a, 0xff, 0xff, 0xff])),
        status.INVALID_ARGUMENT,
        /malformed inference.ModelInferRequest/,
      );
    });

    it('aborts the core signal when the client cancels', async () => {
      let started!: () => void;
      const inferStarted = new Promise<void>((r) => (started = r));
      core.inferImpl = (_req, opts) =>
        new Promise((_resolve, reject) => {
          started();
          abortSignalOf(opts?.signal)?.addEventListener('abort', () => reject(opts?.signal?.reason));
        });
      const controller = new AbortController();
      const call = callUnary(client, svc.modelInfer, rawRequest(), { signal: controller.signal });
      await inferStarted;
      controller.abort();
      await expectStatus(call, status.CANCELLED);
      const signal = core.inferCalls.at(-1)?.signal;
      await expect.poll(() => signal?.aborted).toBe(true);
      expect((signal?.reason as TesseraError).code).toBe('CANCELLED');
    });

    it('aborts the core signal when the deadline passes', async () => {
      core.inferImpl = (_req, opts) =>
        new Promise((_resolve, reject) => abortSignalOf(opts?.signal)?.addEventListener('abort', () => reject(opts?.signal?.reason)));
      await expectStatus(
        callUnary(client, svc.modelInfer, rawRequest(), { deadline: Date.now() + 200 }),
        status.DEADLINE_EXCEEDED,
      );
      const signal = core.inferCalls.at(-1)?.signal;
      await expect.poll(() => signal?.aborted).toBe(true);
      expect((signal?.reason as TesseraError).code).toBe('DEADLINE_EXCEEDED');
    });
  });

  describe('ModelStreamInfer', () => {
    function openStream(metadata = new Metadata()): ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse> {
      const m = svc.modelStreamInfer;
      return client.makeBidiStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, metadata);
    }

    function collect(stream: ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse>) {
      const responses: ModelStreamInferResponse[] = [];
      stream.on('data', (r: ModelStreamInferResponse) => responses.push(r));
      return new Promise<{ responses: ModelStreamInferResponse[]; error?: ServiceError }>((resolve) => {
        stream.on('error', (error: ServiceError) => resolve({ responses, error }));
        stream.on('end', () => resolve({ responses }));
      });
    }

    it('answers in request order with an in-band error in the middle, and keeps going', async () => {
      // The first request is the slowest: its answer must still come first.
      core.inferImpl = async (r) => {
        if (r.id === 'a') await new Promise((resolve) => setTimeout(resolve, 100));
        return core.echo(r);
      };
      const stream = openStream();
      const done = collect(stream);
      stream.write(rawRequest({ id: 'a' }));
      stream.write(rawRequest({ id: 'b', modelName: 'nope' }));
      stream.write(rawRequest({ id: 'c', rawInputContents: [fp32([1])] }));
      stream.write(rawRequest({ id: 'd' }));
      stream.end();
      const { responses, error } = await done;
      expect(error).toBeUndefined();
      expect(responses.map((r) => r.inferResponse?.id)).toEqual(['a', 'b', 'c', 'd']);
      expect(responses.map((r) => r.errorMessage !== '')).toEqual([false, true, true, false]);
      expect(responses[1]?.errorMessage).toMatch(/unknown model: 'nope'/);
      expect(responses[1]?.inferResponse?.modelName).toBe('nope');
      expect(responses[2]?.errorMessage).toMatch(/unexpected total byte size/);
      expect(responses[3]?.inferResponse?.rawOutputContents[0]).toEqual(fp32([1, 2, 3, 4]));
    });

    it('handles more requests than the per-stream in-flight limit', async () => {
      const stream = openStream();
      const done = collect(stream);
      for (let i = 0; i < 20; i++) stream.write(rawRequest({ id: String(i) }));
      stream.end();
      const { responses } = await done;
      expect(responses.map((r) => r.inferResponse?.id)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    });

    it('ends the stream with a status on the first error when triton_grpc_error is set', async () => {
      const md = new Metadata();
      md.set('triton_grpc_error', 'true');
      const stream = openStream(md);
      const done = collect(stream);
      stream.write(rawRequest({ id: 'a' }));
      stream.write(rawRequest({ id: 'b', modelName: 'nope' }));
      const { responses, error } = await done;
      expect(responses.map((r) => r.inferResponse?.id)).toEqual(['a']);
      expect(error?.code).toBe(status.INVALID_ARGUMENT);
    });

    it('aborts the signals of a cancelled stream', async () => {
      let started!: () => void;
      const inferStarted = new Promise<void>((r) => (started = r));
      core.inferImpl = (_req, opts) =>
        new Promise((_resolve, reject) => {
          started();
          abortSignalOf(opts?.signal)?.addEventListener('abort', () => reject(opts?.signal?.reason));
        });
      const stream = openStream();
      const done = collect(stream);
      stream.write(rawRequest());
      await inferStarted;
      stream.cancel();
      expect((await done).error?.code).toBe(status.CANCELLED);
      const signal = core.inferCalls.at(-1)?.signal;
      await expect.poll(() => signal?.aborted).toBe(true);
    });

    // On the raw front only: the other unary RPCs (in-place-unary.ts) and streams (stream-infer-in-place.ts) are answered in place.
    it.runIf(rawH2Front)('serves every unary RPC and ModelStreamInfer in place', async () => {
      const before = server.relayedStreams();
      await callUnary(client, svc.serverLive, create(ServerLiveRequestSchema));
      await callUnary(client, svc.serverReady, create(ServerReadyRequestSchema));
      await callUnary(client, svc.serverMetadata, create(ServerMetadataRequestSchema));
      await callUnary(client, svc.modelReady, create(ModelReadyRequestSchema, { name: IDENTITY_MODEL }));
      await callUnary(client, svc.modelMetadata, create(ModelMetadataRequestSchema, { name: IDENTITY_MODEL }));
      await callUnary(client, svc.modelConfig, create(ModelConfigRequestSchema, { name: IDENTITY_MODEL }));
      await callUnary(client, svc.modelStatistics, create(ModelStatisticsRequestSchema));
      await callUnary(client, svc.repositoryIndex, create(RepositoryIndexRequestSchema));
      await callUnary(client, health.check, create(HealthCheckRequestSchema));
      await callUnary(client, svc.modelInfer, rawRequest());
      await expectStatus(callUnary(client, svc.modelReady, create(ModelReadyRequestSchema, { name: 'nope' })), status.INVALID_ARGUMENT);
      expect(server.relayedStreams()).toBe(before);
      const stream = openStream();
      const done = collect(stream);
      stream.write(rawRequest());
      stream.end();
      expect((await done).responses).toHaveLength(1);
      expect(server.relayedStreams()).toBe(before);
    });

    it('answers an undecodable message in-band', async () => {
      const m = svc.modelStreamInfer;
      const stream = client.makeBidiStreamRequest(m.path, (b: Buffer) => b, m.responseDeserialize, new Metadata());
      const done = collect(stream as never);
      stream.write(Buffer.from([0x0a, 0xff, 0xff]));
      stream.write(Buffer.from(toBinary(ModelInferRequestSchema, rawRequest({ id: 'ok' }))));
      stream.end();
      const { responses } = await done;
      expect(responses[0]?.errorMessage).toMatch(/malformed/);
      expect(responses[1]?.inferResponse?.id).toBe('ok');
    });
  });

}
