/**
 * Issue 17: sequences through the gateway's gRPC front door stay tenant-scoped. Real redis-server, a
 * real node serving the stateful `silero_vad` (implicit LSTM state), the gateway with its gRPC
 * listener. Tenants A and B interleave one `sequence_id` (int64, then string) over gRPC with different
 * audio; each must get exactly what its own stream computes alone on the node. A ModelStreamInfer
 * stream carries a whole sequence too, in order. ModelInfer's plain calls take the front door's h2
 * fast path (h2-front-infer.ts); a second front door on the same gateway leaves every call to grpc-js,
 * and one tenant on each, interleaving one id, must not meet either.
 */
import { rm } from 'node:fs/promises';
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  type ModelInferRequest,
  type ModelInferResponse,
} from '../../shared/src/gen/grpc_service_pb.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { createGrpcFront, type GrpcFront } from '../../gateway/src/adapters/grpc-front/index.js';
import { startSileroNode, writeSileroRepository, type SileroNode } from '../../gateway/test/sequences/silero-node.js';
import { frontClient, param, type FrontClient } from '../../gateway/test/grpc-front/front-client.js';

const KEYS = { a: 'tsk_sec-grpc-seq-a', b: 'tsk_sec-grpc-seq-b' };
const CHUNKS = 6;
const SAMPLES = 512;

function chunk(stream: 'a' | 'b', i: number): number[] {
  return Array.from({ length: SAMPLES }, (_, k) => {
    const t = (i * SAMPLES + k) / 16_000;
    const amplitude = stream === 'a' ? (i % 3 === 0 ? 0.02 : 0.6) : i % 2 === 0 ? 0.3 : 0.01;
    return Math.round(amplitude * Math.sin(2 * Math.PI * (stream === 'a' ? 220 : 140) * t) * 1e4) / 1e4;
  });
}

function httpBody(sequenceId: number, stream: 'a' | 'b', i: number): string {
  return JSON.stringify({
    parameters: { sequence_id: sequenceId, ...(i === 0 ? { sequence_start: true } : {}), ...(i === CHUNKS - 1 ? { sequence_end: true } : {}) },
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, SAMPLES], data: chunk(stream, i) }],
  });
}

function protoRequest(sequenceId: bigint | string, stream: 'a' | 'b', i: number): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'silero_vad',
    parameters: {
      sequence_id: param(sequenceId),
      ...(i === 0 ? { sequence_start: param(true) } : {}),
      ...(i === CHUNKS - 1 ? { sequence_end: param(true) } : {}),
    },
    inputs: [create(ModelInferRequest_InferInputTensorSchema, { name: 'input', datatype: 'FP32', shape: [1n, BigInt(SAMPLES)] })],
    rawInputContents: [new Uint8Array(Float32Array.from(chunk(stream, i)).buffer)],
  });
}

function probabilityOf(response: ModelInferResponse): string {
  const index = response.outputs.findIndex((o) => o.name === 'output');
  const bytes = response.rawOutputContents[index]!;
  return new Float32Array(bytes.slice().buffer)[0]!.toFixed(6);
}

describe.each([{ port: 'grpc-js', rawH2: false }, { port: 'the raw HTTP/2 front (grpcRawH2)', rawH2: true }])('sequences per tenant through the gRPC front door on $port (redis + silero_vad node + gateway)', ({ rawH2 }) => {
  let redis: RedisServer;
  let repository: string;
  let node: SileroNode;
  let gateway: RunningGateway;
  let client: FrontClient;
  /** A front door on the same gateway with every call left to grpc-js (no h2 fast path). */
  let grpcJsFront: GrpcFront;
  let grpcJsClient: FrontClient;
  const expected: Record<'a' | 'b', string[]> = { a: [], b: [] };

  const infer = async (key: string, request: ModelInferRequest, through: FrontClient = client): Promise<string> => {
    const result = await through.unary<ModelInferResponse>('modelInfer', request, { key });
    expect(result.error?.details).toBeUndefined();
    return probabilityOf(result.response!);
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await writeSileroRepository();
    node = await startSileroNode('sec-grpc-seq-node', repository, redis.url);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEYS.a) }] },
          { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEYS.b) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, grpcRawH2: rawH2, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('silero_vad').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    client = frontClient(gateway.grpcTarget!);
    grpcJsFront = createGrpcFront(gateway.app, { logger: silentLogger, modelInferFastPath: false });
    grpcJsClient = frontClient(`127.0.0.1:${(await grpcJsFront.listen(0, '127.0.0.1')).port}`);
    for (const [stream, id] of [['a', 910_001], ['b', 910_002]] as const) {
      for (let i = 0; i < CHUNKS; i++) {
        const res = await fetch(`${node.httpUrl}/v2/models/silero_vad/infer`, { method: 'POST', body: httpBody(id, stream, i) });
        const parsed = (await res.json()) as { outputs: { name: string; data: number[] }[] };
        expected[stream].push(parsed.outputs.find((o) => o.name === 'output')!.data[0]!.toFixed(6));
      }
    }
    expect(expected.a).not.toEqual(expected.b);
  }, 90_000);

  afterAll(async () => {
    client?.close();
    grpcJsClient?.close();
    await grpcJsFront?.close(1000);
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  for (const sequenceId of [7n, 'shared-grpc-session'] as const) {
    it(`two tenants interleaving sequence_id ${String(sequenceId)} over gRPC each get their own state`, async () => {
      const got: Record<'a' | 'b', string[]> = { a: [], b: [] };
      for (let i = 0; i < CHUNKS; i++) {
        got.a.push(await infer(KEYS.a, protoRequest(sequenceId, 'a', i)));
        got.b.push(await infer(KEYS.b, protoRequest(sequenceId, 'b', i)));
      }
      expect(got.a).toEqual(expected.a);
      expect(got.b).toEqual(expected.b);
    });
  }

  it('two tenants interleaving one sequence_id, one through the h2 fast path and one through grpc-js, each get their own state', async () => {
    const got: Record<'a' | 'b', string[]> = { a: [], b: [] };
    for (let i = 0; i < CHUNKS; i++) {
      got.a.push(await infer(KEYS.a, protoRequest(8n, 'a', i)));
      got.b.push(await infer(KEYS.b, protoRequest(8n, 'b', i), grpcJsClient));
    }
    expect(got.a).toEqual(expected.a);
    expect(got.b).toEqual(expected.b);
    // And across the doors the other way: B cannot continue A's live sequence through grpc-js, nor A B's through the fast path.
    await infer(KEYS.a, protoRequest(43n, 'a', 0));
    await infer(KEYS.b, protoRequest(44n, 'b', 0), grpcJsClient);
    for (const [through, key, id] of [[grpcJsClient, KEYS.b, 43n], [client, KEYS.a, 44n]] as const) {
      const hijack = await through.unary('modelInfer', protoRequest(id, 'b', 1), { key });
      expect(hijack.error?.code).toBe(status.INVALID_ARGUMENT);
      expect(hijack.error?.details).toBe(`sequence ${id} of model 'silero_vad' is not known to the gateway: send sequence_start first`);
    }
  });

  it('a tenant cannot continue another tenant’s live sequence over gRPC', async () => {
    await infer(KEYS.a, protoRequest(42n, 'a', 0));
    const hijack = await client.unary('modelInfer', protoRequest(42n, 'b', 1), { key: KEYS.b });
    expect(hijack.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(hijack.error?.details).toBe("sequence 42 of model 'silero_vad' is not known to the gateway: send sequence_start first");
    expect(await infer(KEYS.a, protoRequest(42n, 'a', 1))).toBe(expected.a[1]);
  });

  it('carries a whole sequence on one ModelStreamInfer stream, in order', async () => {
    const { responses, error } = await client.stream(Array.from({ length: CHUNKS }, (_, i) => protoRequest(77n, 'b', i)), KEYS.a);
    expect(error).toBeUndefined();
    expect(responses.map((r) => r.errorMessage)).toEqual(Array.from({ length: CHUNKS }, () => ''));
    expect(responses.map((r) => probabilityOf(r.inferResponse!))).toEqual(expected.b);
  });
});
