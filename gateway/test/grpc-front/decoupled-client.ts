/**
 * Test support for decoupled models through the gateway's gRPC front door: a real redis-server, a real
 * node over the decoupled repository (../support/decoupled-repository.ts), the gateway with its gRPC
 * listener; a ModelStreamInfer stream that records what arrives; the repeat_int32 and token_stream
 * requests as ModelInferRequests.
 */
import { rm } from 'node:fs/promises';
import { create } from '@bufbuild/protobuf';
import { Metadata, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  type ModelInferRequest,
  type ModelInferResponse,
  type ModelStreamInferResponse,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { writeDecoupledRepository, type DecoupledRepositoryOptions } from '../support/decoupled-repository.js';
import { spawnNode, type SpawnedNode } from '../support/test-node-process.js';
import { frontClient, param, type FrontClient } from './front-client.js';

const svc = clientServiceDefinition(GRPCInferenceService);

export interface DecoupledNode {
  readonly node: SpawnedNode;
  stop(): Promise<void>;
}

/** A node over a decoupled repository, registered in Redis under `nodeId`. */
export async function startDecoupledNode(redisUrl: string, nodeId: string, options: DecoupledRepositoryOptions = {}): Promise<DecoupledNode> {
  const repository = await writeDecoupledRepository(options);
  const node = await spawnNode(repository, ['--redis-url', redisUrl, '--node-id', nodeId, '--advertise-host', '127.0.0.1']);
  return {
    node,
    async stop() {
      if (node.process.exitCode === null && node.process.signalCode === null) {
        node.process.kill('SIGTERM');
        const timer = setTimeout(() => node.process.kill('SIGKILL'), 5000);
        await node.exited;
        clearTimeout(timer);
      }
      await rm(repository, { recursive: true, force: true });
    },
  };
}

export interface DecoupledStack {
  readonly redis: RedisServer;
  readonly node: DecoupledNode;
  readonly gateway: RunningGateway;
  readonly client: FrontClient;
  close(): Promise<void>;
}

/** Redis, one node (`options`), the gateway with `configJson`, and a client of its gRPC front door. */
export async function startDecoupledStack(configJson: object, options: DecoupledRepositoryOptions = {}): Promise<DecoupledStack> {
  const redis = await startRedisServer();
  const node = await startDecoupledNode(redis.url, 'decoupled-node', options);
  const gateway = await startGateway({
    config: loadGatewayConfig(JSON.stringify(configJson)),
    redisUrl: redis.url,
    port: 0,
    grpcPort: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    fleet: { refreshMs: 200 },
  });
  await waitFor(() => gateway.directory.candidates('repeat_int32').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  const client = frontClient(gateway.grpcTarget!);
  return {
    redis,
    node,
    gateway,
    client,
    async close() {
      client.close();
      await gateway.close({ graceMs: 1000 });
      await node.stop();
      await redis.stop();
    },
  };
}

/** One ModelStreamInfer call and everything that came back on it, in arrival order. */
export interface RecordedStream {
  readonly call: ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse>;
  readonly responses: ModelStreamInferResponse[];
  /** Resolves with the final status (undefined when OK). */
  readonly ended: Promise<ServiceError | undefined>;
  /** Resolves once `count` responses arrived (or the stream ended). */
  received(count: number): Promise<void>;
}

export function openStream(client: FrontClient, key: string | undefined, options: { metadata?: Record<string, string>; deadlineMs?: number } = {}): RecordedStream {
  const md = new Metadata();
  if (key !== undefined) md.set('authorization', `Bearer ${key}`);
  for (const [k, v] of Object.entries(options.metadata ?? {})) md.set(k, v);
  const call = client.inference.makeBidiStreamRequest(
    svc.modelStreamInfer.path,
    svc.modelStreamInfer.requestSerialize,
    svc.modelStreamInfer.responseDeserialize,
    md,
    options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs },
  );
  const responses: ModelStreamInferResponse[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let done = false;
  const wake = (): void => {
    for (const waiter of [...waiters]) {
      if (done || responses.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  call.on('data', (r: ModelStreamInferResponse) => {
    responses.push(r);
    wake();
  });
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    let error: ServiceError | undefined;
    call.on('error', (e: ServiceError) => {
      error = e;
    });
    call.on('status', () =>
      setImmediate(() => {
        done = true;
        wake();
        resolve(error);
      }),
    );
  });
  return {
    call,
    responses,
    ended,
    received: (count) =>
      new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
        wake();
      }),
  };
}

/** repeat_int32: one response per value (OUT = value, IDX = i) after `delays[i]` ms, then the bare final flag. */
export function repeatProto(id: string, values: readonly number[], delays: readonly number[] = [], options: { emptyFinal?: boolean; waitMs?: number } = {}): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    id,
    modelName: 'repeat_int32',
    ...(options.emptyFinal === undefined ? {} : { parameters: { triton_enable_empty_final_response: param(options.emptyFinal) } }),
    inputs: [
      { name: 'IN', datatype: 'INT32', shape: [BigInt(values.length)], contents: { intContents: [...values] } },
      { name: 'DELAY', datatype: 'UINT32', shape: [BigInt(values.length)], contents: { uintContents: values.map((_, i) => delays[i] ?? 0) } },
      { name: 'WAIT', datatype: 'UINT32', shape: [1n], contents: { uintContents: [options.waitMs ?? 0] } },
    ],
  });
}

/** token_stream with `stream: true`: one response per token of `prompt`, the last one final. */
export function tokenProto(id: string, prompt: string, model = 'token_stream'): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    id,
    modelName: model,
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new TextEncoder().encode(prompt)] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
    ],
  });
}

/** The `triton_final_response` flag of a stream answer (undefined when absent). */
export function finalFlag(answer: ModelStreamInferResponse): boolean | undefined {
  const choice = answer.inferResponse?.parameters['triton_final_response']?.parameterChoice;
  return choice?.case === 'boolParam' ? choice.value : undefined;
}

/** The named output's raw bytes of a response. */
export function rawOutput(response: ModelInferResponse | undefined, name: string): Uint8Array | undefined {
  const index = response?.outputs.findIndex((o) => o.name === name) ?? -1;
  return index < 0 ? undefined : response!.rawOutputContents[index];
}

/** The first element of a BYTES output (4-byte little-endian length, then the bytes), as text. */
export function firstText(bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined || bytes.length < 4) return undefined;
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  return new TextDecoder().decode(bytes.subarray(4, 4 + length));
}

/** OUT of a repeat_int32 response (undefined for the empty final one). */
export function repeatValue(answer: ModelStreamInferResponse): number | undefined {
  const bytes = rawOutput(answer.inferResponse, 'OUT');
  return bytes === undefined ? undefined : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(0, true);
}
