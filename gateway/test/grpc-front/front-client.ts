/**
 * Test support: a grpc-js client of `inference.GRPCInferenceService` and `grpc.health.v1.Health`
 * built from our protos (shared/src/grpc), as NVIDIA's clients would call the gateway, and the
 * `simple` / `sleepy` requests of the test node as ModelInferRequests.
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, credentials, makeClientConstructor, type Client, type ServiceError, type CallOptions } from '@grpc/grpc-js';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  InferParameterSchema,
  type ModelInferRequest,
  type ModelInferResponse,
  type ModelStreamInferResponse,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { Health } from '../../../shared/src/gen/health_pb.js';
import { clientServiceDefinition } from '../../../shared/src/grpc/index.js';

export interface UnaryResult<T> {
  readonly response?: T;
  readonly error?: ServiceError;
  readonly initial: Metadata;
  readonly trailer: Metadata;
}

type UnaryFn = (request: unknown, metadata: Metadata, options: CallOptions, callback: (error: ServiceError | null, response?: unknown) => void) => {
  on(event: 'metadata', listener: (md: Metadata) => void): unknown;
  on(event: 'status', listener: (status: { metadata: Metadata }) => void): unknown;
};

export interface FrontClient {
  readonly inference: Client & Record<string, unknown>;
  readonly health: Client & Record<string, unknown>;
  unary<T>(method: string, request: unknown, options?: { key?: string | undefined; metadata?: Record<string, string>; deadlineMs?: number }, service?: 'inference' | 'health'): Promise<UnaryResult<T>>;
  /** Opens ModelStreamInfer, writes `requests`, half-closes, and collects the answers and the final status. */
  stream(requests: readonly ModelInferRequest[], key?: string, metadata?: Record<string, string>): Promise<{ responses: ModelStreamInferResponse[]; error?: ServiceError }>;
  close(): void;
}

export function keyMetadata(key: string | undefined, extra: Record<string, string> = {}): Metadata {
  const md = new Metadata();
  if (key !== undefined) md.set('authorization', `Bearer ${key}`);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}

export function frontClient(target: string, options: Record<string, unknown> = {}): FrontClient {
  const Inference = makeClientConstructor(clientServiceDefinition(GRPCInferenceService) as never, 'GRPCInferenceService');
  const HealthClient = makeClientConstructor(clientServiceDefinition(Health) as never, 'Health');
  const inference = new Inference(target, credentials.createInsecure(), options) as Client & Record<string, unknown>;
  const health = new HealthClient(target, credentials.createInsecure(), options) as Client & Record<string, unknown>;
  return {
    inference,
    health,
    unary<T>(method: string, request: unknown, opts: { key?: string | undefined; metadata?: Record<string, string>; deadlineMs?: number } = {}, service: 'inference' | 'health' = 'inference') {
      const client = service === 'inference' ? inference : health;
      const fn = (client[method] as UnaryFn).bind(client);
      return new Promise<UnaryResult<T>>((resolve) => {
        let initial = new Metadata();
        let trailer: Metadata | undefined;
        let outcome: { response?: T; error?: ServiceError } | undefined;
        const done = (): void => {
          if (outcome !== undefined && trailer !== undefined) resolve({ ...outcome, initial, trailer });
        };
        const callOptions: CallOptions = opts.deadlineMs === undefined ? {} : { deadline: Date.now() + opts.deadlineMs };
        const call = fn(request, keyMetadata(opts.key, opts.metadata), callOptions, (error, response) => {
          outcome = error === null ? { response: response as T } : { error };
          if (error !== null) trailer ??= error.metadata;
          done();
        });
        call.on('metadata', (md) => {
          initial = md;
        });
        call.on('status', (status) => {
          trailer = status.metadata;
          done();
        });
      });
    },
    stream(requests, key, metadata) {
      return new Promise((resolve) => {
        const call = (inference.modelStreamInfer as (md: Metadata) => NodeJS.ReadWriteStream & { on: (...a: unknown[]) => unknown })(keyMetadata(key, metadata));
        const responses: ModelStreamInferResponse[] = [];
        let error: ServiceError | undefined;
        call.on('data', (r: ModelStreamInferResponse) => responses.push(r));
        call.on('error', (e: ServiceError) => {
          error = e;
        });
        call.on('status', () => setImmediate(() => resolve({ responses, ...(error === undefined ? {} : { error }) })));
        for (const r of requests) call.write(r as never);
        call.end();
      });
    },
    close() {
      inference.close();
      health.close();
    },
  };
}

const int32 = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
const fp32 = (values: readonly number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);

/** `simple`: INPUT0 = offset..offset+15, INPUT1 = 1s; OUTPUT0 = INPUT0 + 1, OUTPUT1 = INPUT0 - 1. */
export function simpleProto(offset: number, id = ''): ModelInferRequest {
  const input0 = Array.from({ length: 16 }, (_, i) => i + offset);
  return create(ModelInferRequestSchema, {
    id,
    modelName: 'simple',
    inputs: [
      create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] }),
      create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] }),
    ],
    rawInputContents: [int32(input0), int32(Array.from({ length: 16 }, () => 1))],
  });
}

/** `sleepy`: the node holds it `ms` ms, then echoes INPUT0 as OUTPUT0. */
export function sleepyProto(ms: number): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'sleepy',
    inputs: [create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT0', datatype: 'FP32', shape: [1n, 1n] })],
    rawInputContents: [fp32([ms])],
  });
}

/** A request parameter (sequence_id etc.) as the proto's oneof. */
export function param(value: bigint | string | boolean) {
  if (typeof value === 'bigint') return create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value } });
  if (typeof value === 'string') return create(InferParameterSchema, { parameterChoice: { case: 'stringParam', value } });
  return create(InferParameterSchema, { parameterChoice: { case: 'boolParam', value } });
}

export function int32Of(bytes: Uint8Array): number[] {
  return Array.from(new Int32Array(bytes.slice().buffer));
}

export type { ModelInferResponse };
