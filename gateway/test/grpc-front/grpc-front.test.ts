/**
 * The gateway's gRPC front door end to end: a real redis-server, a real node process (`simple`,
 * `sleepy`), the gateway with both listeners, and a grpc-js client built from our protos calling
 * every RPC as NVIDIA's gRPC client would.
 */
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ModelConfigRequestSchema,
  ModelMetadataRequestSchema,
  ModelReadyRequestSchema,
  ModelStatisticsRequestSchema,
  RepositoryIndexRequestSchema,
  RepositoryModelLoadRequestSchema,
  RepositoryModelUnloadRequestSchema,
  ServerLiveRequestSchema,
  ServerMetadataRequestSchema,
  ServerReadyRequestSchema,
  SystemSharedMemoryStatusRequestSchema,
  CudaSharedMemoryRegisterRequestSchema,
  TraceSettingRequestSchema,
  LogSettingsRequestSchema,
  type ModelConfigResponse,
  type ModelInferResponse,
  type ModelMetadataResponse,
  type ModelReadyResponse,
  type ModelStatisticsResponse,
  type RepositoryIndexResponse,
  type ServerLiveResponse,
  type ServerMetadataResponse,
  type ServerReadyResponse,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { HealthCheckRequestSchema, HealthCheckResponse_ServingStatus, type HealthCheckResponse } from '../../../shared/src/gen/health_pb.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { frontClient, int32Of, simpleProto, sleepyProto, type FrontClient } from './front-client.js';

const KEY = { a: 'tsk_grpc-front-a', simpleOnly: 'tsk_grpc-front-simple', limited: 'tsk_grpc-front-limited', hasty: 'tsk_grpc-front-hasty' };

describe.each([{ port: 'grpc-js', rawH2: false }, { port: 'the raw HTTP/2 front (grpcRawH2)', rawH2: true }])('gateway gRPC front door on $port (redis + node + gateway, grpc-js client)', ({ rawH2 }) => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let client: FrontClient;

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'grpc-front-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: {
          standard: { queueTimeoutMs: 20_000 },
          free: { queueTimeoutMs: 20_000, rateLimits: { requestsPerSecond: 0.2, burst: 1 } },
          premium: { queueTimeoutMs: 700 },
        },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
          { id: 'ts', tier: 'standard', allowedModels: ['simple'], keys: [{ id: 'ts1', hash: await sha256Hex(KEY.simpleOnly) }] },
          { id: 'tl', tier: 'free', keys: [{ id: 'tl1', hash: await sha256Hex(KEY.limited) }] },
          { id: 'th', tier: 'premium', keys: [{ id: 'th1', hash: await sha256Hex(KEY.hasty) }] },
        ],
        cache: { models: { simple: { enabled: true } } },
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, grpcRawH2: rawH2, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    client = frontClient(gateway.grpcTarget!);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('answers ServerLive, ServerReady, ServerMetadata (serverName) and the gRPC health check', async () => {
    expect((await client.unary<ServerLiveResponse>('serverLive', create(ServerLiveRequestSchema))).response?.live).toBe(true);
    expect((await client.unary<ServerReadyResponse>('serverReady', create(ServerReadyRequestSchema))).response?.ready).toBe(true);
    const meta = await client.unary<ServerMetadataResponse>('serverMetadata', create(ServerMetadataRequestSchema), { key: KEY.a });
    expect(meta.error).toBeUndefined();
    expect(meta.response?.name).toBe('triton');
    expect(meta.response?.extensions).toContain('model_repository');
    const health = await client.unary<HealthCheckResponse>('check', create(HealthCheckRequestSchema, { service: '' }), {}, 'health');
    expect(health.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const named = await client.unary<HealthCheckResponse>('check', create(HealthCheckRequestSchema, { service: 'inference.GRPCInferenceService' }), {}, 'health');
    expect(named.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const unknown = await client.unary('check', create(HealthCheckRequestSchema, { service: 'nope.Service' }), {}, 'health');
    expect(unknown.error?.code).toBe(status.NOT_FOUND);
  });

  it('refuses calls without a key or with a bad one (UNAUTHENTICATED), and takes x-api-key too', async () => {
    for (const method of ['modelInfer', 'serverMetadata'] as const) {
      const request = method === 'modelInfer' ? simpleProto(1) : create(ServerMetadataRequestSchema);
      const none = await client.unary(method, request);
      expect(none.error?.code, method).toBe(status.UNAUTHENTICATED);
      expect(none.error?.details).toMatch(/missing API key/);
      const bad = await client.unary(method, request, { key: 'tsk_not-a-key' });
      expect(bad.error?.code, method).toBe(status.UNAUTHENTICATED);
    }
    const viaHeader = await client.unary<ModelInferResponse>('modelInfer', simpleProto(2), { metadata: { 'x-api-key': KEY.a } });
    expect(viaHeader.error).toBeUndefined();
  });

  it('infers, and answers the second identical ModelInfer from the cache (x-cache HIT) with identical bytes', async () => {
    const first = await client.unary<ModelInferResponse>('modelInfer', simpleProto(100, 'req-1'), { key: KEY.a });
    expect(first.error).toBeUndefined();
    expect(first.trailer.get('x-cache')).toEqual(['MISS']);
    const r = first.response!;
    expect(r.id).toBe('req-1');
    expect(r.modelName).toBe('simple');
    expect(r.outputs.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(r.outputs[0]!.shape).toEqual([1n, 16n]);
    expect(int32Of(r.rawOutputContents[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => 100 + i + 1));
    expect(int32Of(r.rawOutputContents[1]!)).toEqual(Array.from({ length: 16 }, (_, i) => 100 + i - 1));

    const second = await client.unary<ModelInferResponse>('modelInfer', simpleProto(100, 'req-2'), { key: KEY.a });
    expect(second.error).toBeUndefined();
    expect(second.trailer.get('x-cache')).toEqual(['HIT']);
    expect(second.initial.get('x-cache')).toEqual(['HIT']);
    expect(second.response!.id).toBe('req-2');
    expect(second.response!.rawOutputContents.map((b) => Buffer.from(b).toString('hex'))).toEqual(r.rawOutputContents.map((b) => Buffer.from(b).toString('hex')));

    // Cache-Control travels as metadata: no-store bypasses the cache.
    const bypass = await client.unary<ModelInferResponse>('modelInfer', simpleProto(100), { key: KEY.a, metadata: { 'cache-control': 'no-store' } });
    expect(bypass.trailer.get('x-cache')).toEqual(['BYPASS']);
  });

  it('keeps a tenant to its models (PERMISSION_DENIED) and answers unknown models in Triton wording', async () => {
    const denied = await client.unary('modelInfer', sleepyProto(1), { key: KEY.simpleOnly });
    expect(denied.error?.code).toBe(status.PERMISSION_DENIED);
    const deniedMeta = await client.unary('modelMetadata', create(ModelMetadataRequestSchema, { name: 'sleepy' }), { key: KEY.simpleOnly });
    expect(deniedMeta.error?.code).toBe(status.PERMISSION_DENIED);
    const deniedConfig = await client.unary('modelConfig', create(ModelConfigRequestSchema, { name: 'sleepy' }), { key: KEY.simpleOnly });
    expect(deniedConfig.error?.code).toBe(status.PERMISSION_DENIED);

    const unknown = await client.unary('modelInfer', { ...simpleProto(1), modelName: 'no_such_model' }, { key: KEY.a });
    expect(unknown.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(unknown.error?.details).toBe("Request for unknown model: 'no_such_model' is not found");
    const noName = await client.unary('modelInfer', { ...simpleProto(1), modelName: '' }, { key: KEY.a });
    expect(noName.error?.code).toBe(status.INVALID_ARGUMENT);
  });

  it('answers ModelReady, ModelMetadata and ModelConfig from a node, and RepositoryIndex with the tenant’s models only', async () => {
    const ready = await client.unary<ModelReadyResponse>('modelReady', create(ModelReadyRequestSchema, { name: 'simple' }), { key: KEY.a });
    expect(ready.response?.ready).toBe(true);
    const notReady = await client.unary<ModelReadyResponse>('modelReady', create(ModelReadyRequestSchema, { name: 'simple', version: '9' }), { key: KEY.a });
    expect(notReady.response?.ready).toBe(false);
    const meta = await client.unary<ModelMetadataResponse>('modelMetadata', create(ModelMetadataRequestSchema, { name: 'simple' }), { key: KEY.a });
    expect(meta.error).toBeUndefined();
    expect(meta.response?.name).toBe('simple');
    expect(meta.response?.inputs.map((t) => [t.name, t.datatype])).toEqual([['INPUT0', 'INT32'], ['INPUT1', 'INT32']]);
    expect(meta.response?.inputs[0]!.shape).toEqual([-1n, 16n]);
    const config = await client.unary<ModelConfigResponse>('modelConfig', create(ModelConfigRequestSchema, { name: 'simple' }), { key: KEY.a });
    expect(config.error).toBeUndefined();
    expect(config.response?.config?.name).toBe('simple');
    expect(config.response?.config?.input.map((t) => t.name)).toEqual(['INPUT0', 'INPUT1']);

    const all = await client.unary<RepositoryIndexResponse>('repositoryIndex', create(RepositoryIndexRequestSchema, { ready: true }), { key: KEY.a });
    expect(all.response?.models.map((m) => m.name).sort()).toEqual(['simple', 'sleepy']);
    expect(all.response?.models.every((m) => m.state === 'READY')).toBe(true);
    const some = await client.unary<RepositoryIndexResponse>('repositoryIndex', create(RepositoryIndexRequestSchema), { key: KEY.simpleOnly });
    expect(some.response?.models.map((m) => m.name)).toEqual(['simple']);
  });

  it('answers ModelStatistics with the tenant’s own counts', async () => {
    const mine = await client.unary<ModelStatisticsResponse>('modelStatistics', create(ModelStatisticsRequestSchema, { name: 'simple' }), { key: KEY.a });
    expect(mine.error).toBeUndefined();
    const simple = mine.response!.modelStats.find((s) => s.name === 'simple')!;
    expect(Number(simple.inferenceStats?.success?.count)).toBeGreaterThanOrEqual(3);
    const theirs = await client.unary<ModelStatisticsResponse>('modelStatistics', create(ModelStatisticsRequestSchema, { name: 'simple' }), { key: KEY.simpleOnly });
    expect(theirs.error).toBeUndefined();
    expect(Number(theirs.response!.modelStats.find((s) => s.name === 'simple')?.inferenceStats?.success?.count ?? 0n)).toBe(0);
    const everything = await client.unary<ModelStatisticsResponse>('modelStatistics', create(ModelStatisticsRequestSchema), { key: KEY.a });
    expect(everything.error).toBeUndefined();
  });

  it('rate-limits with RESOURCE_EXHAUSTED and retry information in the trailing metadata', async () => {
    const first = await client.unary('modelInfer', simpleProto(300), { key: KEY.limited });
    expect(first.error).toBeUndefined();
    expect(first.trailer.get('ratelimit-limit')).toEqual(['1']);
    const second = await client.unary('modelInfer', simpleProto(301), { key: KEY.limited });
    expect(second.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(second.error?.details).toMatch(/rate limit exceeded for tenant 'tl'/);
    expect(Number(second.trailer.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    expect(second.trailer.get('ratelimit-remaining')).toEqual(['0']);
  });

  it('honours grpc-timeout: a call held past its deadline ends DEADLINE_EXCEEDED', async () => {
    const started = Date.now();
    const late = await client.unary('modelInfer', sleepyProto(3000), { key: KEY.a, deadlineMs: 400 });
    expect(late.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('rejects at admission with UNAVAILABLE (and a retry hint) when the queue cannot serve the tier in time', async () => {
    // One call (a patient tier's: the node may still be busy with the previous test's call) teaches the
    // gateway sleepy's execution time; then a burst the node cannot serve within the premium tier's 700 ms.
    expect((await client.unary('modelInfer', sleepyProto(400), { key: KEY.a })).error).toBeUndefined();
    const results = await Promise.all(Array.from({ length: 40 }, () => client.unary('modelInfer', sleepyProto(400), { key: KEY.hasty })));
    const codes = results.map((r) => r.error?.code ?? status.OK);
    expect(codes.every((c) => c === status.OK || c === status.UNAVAILABLE || c === status.DEADLINE_EXCEEDED), codes.join(',')).toBe(true);
    const rejected = results.filter((r) => r.error?.code === status.UNAVAILABLE);
    expect(rejected.length, codes.join(',')).toBeGreaterThan(0);
    expect(rejected[0]!.error?.details).toMatch(/sleepy/);
    expect(Number(rejected[0]!.trailer.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
  });

  it('streams ModelStreamInfer answers in order, with an error in-band as error_message', async () => {
    const { responses, error } = await client.stream(
      [simpleProto(10, 's1'), simpleProto(11, 's2'), { ...simpleProto(12, 's3'), modelName: 'no_such_model' }, simpleProto(13, 's4')],
      KEY.a,
    );
    expect(error).toBeUndefined();
    expect(responses.map((r) => r.inferResponse?.id)).toEqual(['s1', 's2', 's3', 's4']);
    expect(responses.map((r) => r.errorMessage)).toEqual(['', '', "Request for unknown model: 'no_such_model' is not found", '']);
    expect(int32Of(responses[3]!.inferResponse!.rawOutputContents[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => 13 + i + 1));
    const refused = await client.stream([simpleProto(14)]);
    expect(refused.error?.code).toBe(status.UNAUTHENTICATED);
    // Triton's opt-in: with triton_grpc_error the first error ends the stream with its status.
    const strict = await client.stream([simpleProto(15, 't1'), { ...simpleProto(16, 't2'), modelName: 'no_such_model' }, simpleProto(17, 't3')], KEY.a, { triton_grpc_error: 'true' });
    expect(strict.responses.map((r) => r.inferResponse?.id)).toEqual(['t1']);
    expect(strict.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(strict.error?.details).toBe("Request for unknown model: 'no_such_model' is not found");
  });

  it('refuses the repository, shared-memory, trace and log RPCs with a message naming the RPC', async () => {
    const load = await client.unary('repositoryModelLoad', create(RepositoryModelLoadRequestSchema, { modelName: 'simple' }), { key: KEY.a });
    expect(load.error?.code).toBe(status.PERMISSION_DENIED);
    expect(load.error?.details).toMatch(/^RepositoryModelLoad /);
    const unload = await client.unary('repositoryModelUnload', create(RepositoryModelUnloadRequestSchema, { modelName: 'simple' }), { key: KEY.a });
    expect(unload.error?.code).toBe(status.PERMISSION_DENIED);
    expect(unload.error?.details).toMatch(/^RepositoryModelUnload /);
    const shm = await client.unary('systemSharedMemoryStatus', create(SystemSharedMemoryStatusRequestSchema), { key: KEY.a });
    expect(shm.error?.code).toBe(status.UNIMPLEMENTED);
    expect(shm.error?.details).toMatch(/^SystemSharedMemoryStatus /);
    const cuda = await client.unary('cudaSharedMemoryRegister', create(CudaSharedMemoryRegisterRequestSchema), { key: KEY.a });
    expect(cuda.error?.code).toBe(status.UNIMPLEMENTED);
    expect((await client.unary('traceSetting', create(TraceSettingRequestSchema), { key: KEY.a })).error?.details).toMatch(/^TraceSetting /);
    expect((await client.unary('logSettings', create(LogSettingsRequestSchema), { key: KEY.a })).error?.details).toMatch(/^LogSettings /);
  });

  it('answers a request field it cannot serve with a status naming it (thrown in the RPC logic; in place on the raw port)', async () => {
    const relayed = gateway.grpcRelayedStreams();
    const versionOnly = await client.unary('modelStatistics', create(ModelStatisticsRequestSchema, { version: '1' }), { key: KEY.a });
    expect(versionOnly.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(versionOnly.error?.details).toBe("ModelStatistics: a 'version' needs a model 'name'");
    const named = await client.unary('repositoryIndex', create(RepositoryIndexRequestSchema, { repositoryName: 'other' }), { key: KEY.a });
    expect(named.error?.code).toBe(status.UNIMPLEMENTED);
    const badVersion = await client.unary('modelMetadata', create(ModelMetadataRequestSchema, { name: 'simple', version: 'x1' }), { key: KEY.a });
    expect(badVersion.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(badVersion.error?.details).toBe("invalid model version 'x1': expected a decimal number");
    const noName = await client.unary('modelConfig', create(ModelConfigRequestSchema), { key: KEY.a });
    expect(noName.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(noName.error?.details).toBe("ModelConfig: 'model_name' is required");
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
  });

  it.runIf(rawH2)('serves every unary RPC in place on the raw port; only ModelStreamInfer goes on to grpc-js', async () => {
    const before = gateway.grpcRelayedStreams();
    const calls: [string, unknown][] = [
      ['serverLive', create(ServerLiveRequestSchema)],
      ['serverReady', create(ServerReadyRequestSchema)],
      ['serverMetadata', create(ServerMetadataRequestSchema)],
      ['modelReady', create(ModelReadyRequestSchema, { name: 'simple' })],
      ['modelMetadata', create(ModelMetadataRequestSchema, { name: 'simple' })],
      ['modelConfig', create(ModelConfigRequestSchema, { name: 'simple' })],
      ['modelStatistics', create(ModelStatisticsRequestSchema)],
      ['repositoryIndex', create(RepositoryIndexRequestSchema)],
      ['repositoryModelLoad', create(RepositoryModelLoadRequestSchema, { modelName: 'simple' })],
      ['systemSharedMemoryStatus', create(SystemSharedMemoryStatusRequestSchema)],
      ['traceSetting', create(TraceSettingRequestSchema)],
      ['logSettings', create(LogSettingsRequestSchema)],
    ];
    for (const [method, request] of calls) {
      const answered = await client.unary(method, request, { key: KEY.a });
      expect(answered.error === undefined || answered.error.code !== status.INTERNAL, method).toBe(true);
    }
    expect((await client.unary('serverMetadata', create(ServerMetadataRequestSchema))).error?.code).toBe(status.UNAUTHENTICATED);
    expect((await client.unary<HealthCheckResponse>('check', create(HealthCheckRequestSchema), {}, 'health')).response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(gateway.grpcRelayedStreams()).toBe(before);
    expect((await client.stream([simpleProto(41, 'r1')], KEY.a)).responses.map((r) => r.inferResponse?.id)).toEqual(['r1']);
    expect(gateway.grpcRelayedStreams()).toBe(before + 1);
  });

  it('drains on close: a call in flight finishes, then the gRPC port is closed', async () => {
    const inFlight = client.unary<ModelInferResponse>('modelInfer', sleepyProto(600), { key: KEY.a });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const closed = gateway.close({ graceMs: 5000 });
    const answer = await inFlight;
    expect(answer.error).toBeUndefined();
    await closed;
    const after = await client.unary('serverLive', create(ServerLiveRequestSchema), { deadlineMs: 2000 });
    expect(after.error?.code).toBe(status.UNAVAILABLE);
  });
});
