/**
 * The front door's unary RPCs other than ModelInfer, written once against what a call carries (its
 * request headers, a cancellation signal) so that grpc-js's handlers (inference-front.ts) and the raw
 * HTTP/2 port's in-place calls (in-place-front.ts) run the same logic and give the same answers.
 *
 * Each RPC is answered by the gateway's own HTTP route for it, called in process through the app's
 * `fetch` (same authentication, model permission, tenant scoping, rate limits, statistics, metrics and
 * access line), its JSON read into the gRPC message. Repository load/unload are PERMISSION_DENIED
 * (tenants never change the fleet's repository), shared memory UNIMPLEMENTED, trace and log settings
 * PERMISSION_DENIED, each with a message naming the RPC.
 */
import { create, fromJson, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import { status as GrpcCode } from '@grpc/grpc-js';
import {
  ModelConfigResponseSchema,
  ModelMetadataResponseSchema,
  ModelReadyResponseSchema,
  ModelStatisticsResponseSchema,
  RepositoryIndexResponseSchema,
  ServerLiveResponseSchema,
  ServerMetadataResponseSchema,
  ServerReadyResponseSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type { ModelConfigRequest, ModelMetadataRequest, ModelReadyRequest, ModelStatisticsRequest, RepositoryIndexRequest } from '../../../../shared/src/gen/grpc_service_pb.js';
import { GRPCInferenceService as InferenceServiceDesc } from '../../../../shared/src/gen/grpc_service_pb.js';
import { HealthCheckResponseSchema, HealthCheckResponse_ServingStatus, type HealthCheckRequest } from '../../../../shared/src/gen/health_pb.js';
import { ModelConfigSchema } from '../../../../shared/src/gen/model_config_pb.js';
import { answerMetadataValues, errorMessageOf, grpcCodeOfHttp, requireModelName, versionOf } from './call-bridge.js';

/** What the logic reads of a call. */
export interface UnaryContext {
  /** The call's metadata as request headers (call-bridge.ts: metadataHeaders, h2StreamHeaders). */
  headers(): Map<string, string>;
  /** Aborts when the client cancels. */
  readonly signal: AbortSignal;
}

/** A call's answer: the response message and its trailing metadata (lower-case keys). */
export interface UnaryAnswer {
  readonly response: unknown;
  readonly trailer?: Readonly<Record<string, string>>;
}

export type UnaryFrontLogic = (request: never, context: UnaryContext) => Promise<UnaryAnswer>;

/** A status answered at the request's edge (its own fields) or from an HTTP answer: never a crash. */
export class Answered extends Error {
  constructor(
    readonly code: GrpcCode,
    message: string,
    readonly trailer: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** What the logic needs of the gateway app. */
export interface RouteApp {
  readonly fetch: (request: Request) => Promise<Response>;
}

/** An in-process request to the gateway's own HTTP route, with the call's metadata as headers. */
async function route(app: RouteApp, context: UnaryContext, method: 'GET' | 'POST', path: string, body?: string): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of context.headers()) {
    try {
      headers.set(name, value);
    } catch {
      // a metadata value HTTP cannot carry: not a header the routes read
    }
  }
  if (body !== undefined) headers.set('content-type', 'application/json');
  return app.fetch(new Request(`http://gateway.grpc${path}`, { method, headers, signal: context.signal, ...(body === undefined ? {} : { body }) }));
}

/** The route's JSON on success; its status as a gRPC error otherwise (the answer's headers as trailer). */
async function json(response: Response): Promise<{ value: JsonValue; trailer: Record<string, string> }> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const trailer = answerMetadataValues(response.headers);
  if (response.status !== 200) throw new Answered(grpcCodeOfHttp(response.status), errorMessageOf(bytes, response.status), trailer);
  return { value: JSON.parse(new TextDecoder().decode(bytes)) as JsonValue, trailer };
}

function fromRouteJson<M extends DescMessage>(schema: M, value: JsonValue): MessageShape<M> {
  return fromJson(schema, value, { ignoreUnknownFields: true });
}

function modelPath(name: string, version: string, rpc: string): string {
  const model = encodeURIComponent(requireModelName(name, rpc));
  const v = versionOf(version);
  return v === undefined ? `/v2/models/${model}` : `/v2/models/${model}/versions/${v}`;
}

const SHARED_MEMORY = 'shared memory cannot cross the network to the gateway; send tensors in the request';
const REPOSITORY = "the fleet's model repository is managed on the nodes, not by tenants";

function refused(code: GrpcCode, message: string): UnaryFrontLogic {
  return () => Promise.reject(new Answered(code, message));
}
const denied = (rpc: string, why: string): UnaryFrontLogic => refused(GrpcCode.PERMISSION_DENIED, `${rpc} is not available through the gateway: ${why}`);
const unimplemented = (rpc: string, why: string): UnaryFrontLogic => refused(GrpcCode.UNIMPLEMENTED, `${rpc} is not supported by the gateway: ${why}`);

/** `inference.GRPCInferenceService`'s unary RPCs but ModelInfer, by method local name. */
export function inferenceUnaryFrontLogic(app: RouteApp): Record<string, UnaryFrontLogic> {
  const logic = {
    serverLive: async (_req: unknown, context: UnaryContext) => {
      const res = await route(app, context, 'GET', '/v2/health/live');
      await res.arrayBuffer();
      return { response: create(ServerLiveResponseSchema, { live: res.status === 200 }) };
    },
    serverReady: async (_req: unknown, context: UnaryContext) => {
      const res = await route(app, context, 'GET', '/v2/health/ready');
      await res.arrayBuffer();
      return { response: create(ServerReadyResponseSchema, { ready: res.status === 200 }) };
    },
    serverMetadata: async (_req: unknown, context: UnaryContext) => {
      const { value, trailer } = await json(await route(app, context, 'GET', '/v2'));
      return { response: fromRouteJson(ServerMetadataResponseSchema, value), trailer };
    },
    modelReady: async (req: ModelReadyRequest, context: UnaryContext) => {
      const res = await route(app, context, 'GET', `${modelPath(req.name, req.version, 'ModelReady')}/ready`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const trailer = answerMetadataValues(res.headers);
      // 200 ready, 400 not ready (Triton's HTTP answers); anything else (401, 403, 429...) is a status.
      if (res.status !== 200 && res.status !== 400) throw new Answered(grpcCodeOfHttp(res.status), errorMessageOf(bytes, res.status), trailer);
      return { response: create(ModelReadyResponseSchema, { ready: res.status === 200 }), trailer };
    },
    modelMetadata: async (req: ModelMetadataRequest, context: UnaryContext) => {
      const { value, trailer } = await json(await route(app, context, 'GET', modelPath(req.name, req.version, 'ModelMetadata')));
      return { response: fromRouteJson(ModelMetadataResponseSchema, value), trailer };
    },
    modelConfig: async (req: ModelConfigRequest, context: UnaryContext) => {
      const { value, trailer } = await json(await route(app, context, 'GET', `${modelPath(req.name, req.version, 'ModelConfig')}/config`));
      return { response: create(ModelConfigResponseSchema, { config: fromRouteJson(ModelConfigSchema, value) }), trailer };
    },
    modelStatistics: async (req: ModelStatisticsRequest, context: UnaryContext) => {
      const path = req.name === '' ? (req.version === '' ? '/v2/models/stats' : undefined) : `${modelPath(req.name, req.version, 'ModelStatistics')}/stats`;
      if (path === undefined) throw new Answered(GrpcCode.INVALID_ARGUMENT, "ModelStatistics: a 'version' needs a model 'name'");
      const { value, trailer } = await json(await route(app, context, 'GET', path));
      return { response: fromRouteJson(ModelStatisticsResponseSchema, value), trailer };
    },
    repositoryIndex: async (req: RepositoryIndexRequest, context: UnaryContext) => {
      if (req.repositoryName !== '') throw new Answered(GrpcCode.UNIMPLEMENTED, "RepositoryIndex: 'repository_name' specification is not supported");
      const { value, trailer } = await json(await route(app, context, 'POST', '/v2/repository/index', JSON.stringify({ ready: req.ready })));
      return { response: fromRouteJson(RepositoryIndexResponseSchema, { models: value }), trailer };
    },
    repositoryModelLoad: denied('RepositoryModelLoad', REPOSITORY),
    repositoryModelUnload: denied('RepositoryModelUnload', REPOSITORY),
    systemSharedMemoryStatus: unimplemented('SystemSharedMemoryStatus', SHARED_MEMORY),
    systemSharedMemoryRegister: unimplemented('SystemSharedMemoryRegister', SHARED_MEMORY),
    systemSharedMemoryUnregister: unimplemented('SystemSharedMemoryUnregister', SHARED_MEMORY),
    cudaSharedMemoryStatus: unimplemented('CudaSharedMemoryStatus', SHARED_MEMORY),
    cudaSharedMemoryRegister: unimplemented('CudaSharedMemoryRegister', SHARED_MEMORY),
    cudaSharedMemoryUnregister: unimplemented('CudaSharedMemoryUnregister', SHARED_MEMORY),
    traceSetting: denied('TraceSetting', 'tracing is configured by the operator (--otlp-endpoint)'),
    logSettings: denied('LogSettings', 'logging is configured by the operator'),
  };
  return logic as Record<string, UnaryFrontLogic>;
}

/** `grpc.health.v1.Health/Check`: the gateway's readiness ('' or the inference service), as Triton answers. */
export function healthUnaryFrontLogic(app: RouteApp): Record<string, UnaryFrontLogic> {
  const check = async (req: HealthCheckRequest, context: UnaryContext): Promise<UnaryAnswer> => {
    if (req.service !== '' && req.service !== InferenceServiceDesc.typeName) throw new Answered(GrpcCode.NOT_FOUND, `unknown service '${req.service}'`);
    const res = await route(app, context, 'GET', '/v2/health/ready');
    await res.arrayBuffer();
    const status = res.status === 200 ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
    return { response: create(HealthCheckResponseSchema, { status }) };
  };
  return { check: check as UnaryFrontLogic };
}
