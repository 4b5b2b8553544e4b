/**
 * Issue 17: hostile input at the gateway's gRPC front door gets a status, never a crash: undecodable
 * protobuf (unary and in a stream), messages over the size bound, a tier's largest request, missing
 * model names, bad versions, huge, negative and inconsistent shapes, unknown datatypes, path tricks in
 * model names. Real redis-server, a real node process, the gateway in this process (a crash would end
 * the test run), and a good request served after all of it.
 */
import { create } from '@bufbuild/protobuf';
import { Client, Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  InferTensorContentsSchema,
  ModelMetadataRequestSchema,
  ModelConfigRequestSchema,
  type ModelInferResponse,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from '../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage } from '../../shared/src/grpc/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { frontClient, int32Of, simpleProto, type FrontClient } from '../../gateway/test/grpc-front/front-client.js';

const KEY = { std: 'tsk_sec-grpc-input-std', free: 'tsk_sec-grpc-input-free' };
const MAX_BODY = 2 * 1024 * 1024;

function tensor(name: string, datatype: string, shape: bigint[]) {
  return create(ModelInferRequest_InferInputTensorSchema, { name, datatype, shape });
}

describe('gRPC front door under hostile input (redis + node + gateway)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let client: FrontClient;
  let raw: Client;

  const auth = (): Metadata => {
    const md = new Metadata();
    md.set('authorization', `Bearer ${KEY.std}`);
    return md;
  };
  const infer = (request: unknown, key = KEY.std) => client.unary<ModelInferResponse>('modelInfer', request, { key });
  const expectStatus = async (request: unknown, code: status, pattern?: RegExp): Promise<void> => {
    const result = await infer(request);
    expect(result.error?.code, result.error?.details ?? 'answered OK').toBe(code);
    if (pattern !== undefined) expect(result.error?.details).toMatch(pattern);
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-grpc-input-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        maxBodyBytes: MAX_BODY,
        tiers: { standard: { queueTimeoutMs: 20_000, maxRequestBytes: MAX_BODY }, free: { maxRequestBytes: 256 * 1024 } },
        tenants: [
          { id: 'ts', tier: 'standard', keys: [{ id: 'ts1', hash: await sha256Hex(KEY.std) }] },
          { id: 'tf', tier: 'free', keys: [{ id: 'tf1', hash: await sha256Hex(KEY.free) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    client = frontClient(gateway.grpcTarget!, { 'grpc.max_send_message_length': 64 * 1024 * 1024 });
    raw = new Client(gateway.grpcTarget!, credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    raw?.close();
    client?.close();
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('answers undecodable protobuf with INVALID_ARGUMENT', async () => {
    // A truncated length-delimited field, an endless varint, and text (which may happen to parse as
    // unknown fields: then it is an empty request, refused for its missing model name).
    const cases = [Buffer.from([0x0a, 0x05, 0x61]), Buffer.from([0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]), Buffer.from('not protobuf at all')];
    for (const [i, bytes] of cases.entries()) {
      const error = await new Promise<ServiceError | null>((resolve) => {
        raw.makeUnaryRequest(
          '/inference.GRPCInferenceService/ModelInfer',
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          auth(),
          (err) => resolve(err),
        );
      });
      expect(error?.code).toBe(status.INVALID_ARGUMENT);
      expect(error?.details).toMatch(i < 2 ? /malformed inference\.ModelInferRequest/ : /malformed inference\.ModelInferRequest|model_name/);
    }
  });

  it('answers undecodable protobuf inside ModelStreamInfer in-band, and the stream goes on', async () => {
    const call = raw.makeBidiStreamRequest(
      '/inference.GRPCInferenceService/ModelStreamInfer',
      (b: Buffer) => b,
      (b: Buffer) => decodeMessage(ModelStreamInferResponseSchema, b),
      auth(),
    );
    const answers: ModelStreamInferResponse[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (r: ModelStreamInferResponse) => answers.push(r));
      call.on('status', () => resolve());
      call.on('error', reject);
    });
    const { toBinary } = await import('@bufbuild/protobuf');
    call.write(Buffer.from([0xff, 0xff, 0xff]));
    call.write(Buffer.from(toBinary(ModelInferRequestSchema, simpleProto(5, 'good'))));
    call.end();
    await ended;
    expect(answers).toHaveLength(2);
    expect(answers[0]!.errorMessage).toMatch(/malformed inference\.ModelInferRequest/);
    expect(answers[1]!.errorMessage).toBe('');
    expect(answers[1]!.inferResponse?.id).toBe('good');
  });

  it('refuses a message over the size bound (RESOURCE_EXHAUSTED) and a request over the tier’s largest', async () => {
    const big = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [tensor('INPUT0', 'INT32', [1n, 16n])],
      rawInputContents: [new Uint8Array(MAX_BODY + 1024)],
    });
    await expectStatus(big, status.RESOURCE_EXHAUSTED);
    const forFree = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [tensor('INPUT0', 'INT32', [1n, 128n * 1024n]), tensor('INPUT1', 'INT32', [1n, 128n * 1024n])],
      rawInputContents: [new Uint8Array(512 * 1024), new Uint8Array(512 * 1024)],
    });
    const free = await infer(forFree, KEY.free);
    expect(free.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(free.error?.details).toMatch(/tier 'free'/);
  });

  it('refuses missing model names, bad versions and path tricks in names', async () => {
    await expectStatus({ ...simpleProto(1), modelName: '' }, status.INVALID_ARGUMENT, /model_name/);
    await expectStatus({ ...simpleProto(1), modelVersion: 'latest' }, status.INVALID_ARGUMENT, /version/);
    await expectStatus({ ...simpleProto(1), modelVersion: '99999999999999999999999' }, status.INVALID_ARGUMENT, /version/);
    for (const name of ['../../admin/tenants', 'simple/../../v2', '%2e%2e', 'simple?x=1', '\u0000']) {
      for (const method of ['modelMetadata', 'modelConfig'] as const) {
        const schema = method === 'modelMetadata' ? ModelMetadataRequestSchema : ModelConfigRequestSchema;
        const result = await client.unary(method, create(schema, { name }), { key: KEY.std });
        expect(result.error?.code, `${method} ${JSON.stringify(name)}`).toBeDefined();
        expect([status.INVALID_ARGUMENT, status.NOT_FOUND, status.PERMISSION_DENIED]).toContain(result.error?.code);
      }
      const inferred = await infer({ ...simpleProto(1), modelName: name });
      expect([status.INVALID_ARGUMENT, status.NOT_FOUND, status.PERMISSION_DENIED]).toContain(inferred.error?.code);
    }
  });

  it('refuses huge, negative and inconsistent shapes and unknown datatypes with INVALID_ARGUMENT', async () => {
    const withInput = (datatype: string, shape: bigint[], data?: Uint8Array) =>
      create(ModelInferRequestSchema, { modelName: 'simple', inputs: [tensor('INPUT0', datatype, shape)], rawInputContents: data === undefined ? [] : [data] });
    await expectStatus(withInput('INT32', [1n << 40n, 1n << 40n], new Uint8Array(64)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('INT32', [(1n << 62n) + 1n], new Uint8Array(64)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('INT32', [-5n], new Uint8Array(64)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('INT32', [-(1n << 63n)], new Uint8Array(64)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('BYTES', [1_000_000_000n], new Uint8Array(8)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('FP128', [1n], new Uint8Array(16)), status.INVALID_ARGUMENT);
    await expectStatus(withInput('INT32', Array.from({ length: 10_000 }, () => 1n), new Uint8Array(4)), status.INVALID_ARGUMENT);
    // Typed contents claiming a huge shape.
    await expectStatus(
      create(ModelInferRequestSchema, {
        modelName: 'simple',
        inputs: [create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT0', datatype: 'INT32', shape: [1n << 31n, 1n << 31n], contents: create(InferTensorContentsSchema, { intContents: [1, 2, 3] }) })],
      }),
      status.INVALID_ARGUMENT,
    );
    // Raw contents that do not match the inputs (count), and no data at all.
    await expectStatus({ ...simpleProto(1), rawInputContents: [new Uint8Array(64)] }, status.INVALID_ARGUMENT);
    await expectStatus(withInput('INT32', [1n, 16n]), status.INVALID_ARGUMENT);
  });

  it('still serves a good request afterwards', async () => {
    const result = await infer(simpleProto(40));
    expect(result.error).toBeUndefined();
    expect(int32Of(result.response!.rawOutputContents[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => 41 + i));
  });
});
