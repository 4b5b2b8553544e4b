/**
 * `inference.GRPCInferenceService` and `grpc.health.v1.Health` on the gateway. Inference goes through
 * the infer pipeline (front-infer.ts); every other RPC is answered by the gateway's own HTTP route for
 * it, called in process through the app's `fetch` (same authentication, model permission, tenant
 * scoping, rate limits, statistics, metrics and access line), its JSON read into the gRPC message.
 * Repository load/unload are PERMISSION_DENIED (tenants never change the fleet's repository), shared
 * memory, trace and log settings UNIMPLEMENTED, each with a message naming the RPC.
 */
import { create, fromJson, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import { Metadata, status as GrpcCode } from '@grpc/grpc-js';
import type { Deadline, ServerDuplexStream, ServerUnaryCall, UntypedServiceImplementation, handleUnaryCall } from '@grpc/grpc-js';
import {
  ModelConfigResponseSchema,
  ModelInferResponseSchema,
  ModelMetadataResponseSchema,
  ModelReadyResponseSchema,
  ModelStatisticsResponseSchema,
  ModelStreamInferResponseSchema,
  RepositoryIndexResponseSchema,
  ServerLiveResponseSchema,
  ServerMetadataResponseSchema,
  ServerReadyResponseSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type {
  GRPCInferenceService,
  ModelConfigRequest,
  ModelInferRequest,
  ModelMetadataRequest,
  ModelReadyRequest,
  ModelStatisticsRequest,
  ModelStreamInferResponse,
  RepositoryIndexRequest,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import { HealthCheckResponseSchema, HealthCheckResponse_ServingStatus, type HealthCheckRequest } from '../../../../shared/src/gen/health_pb.js';
import { ModelConfigSchema } from '../../../../shared/src/gen/model_config_pb.js';
import { GRPCInferenceService as InferenceServiceDesc } from '../../../../shared/src/gen/grpc_service_pb.js';
import { MalformedMessage, UnsentBudget, type Incoming } from '../../../../shared/src/grpc/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { DecoupledCheck, DirectInfer } from '../../core/app/index.js';
import type { HttpAnswer } from '../../core/http/index.js';
import {
  answerError,
  answerMetadata,
  errorMessageOf,
  grpcCodeOfHttp,
  metadataHeaders,
  requireModelName,
  statusError,
  thrownError,
  versionOf,
} from './call-bridge.js';
import { relayDecoupled } from './decoupled-relay.js';
import { frontInfer } from './front-infer.js';

/** What the front door needs of the gateway app (core/app/create-gateway-app.ts's GatewayApp). */
export interface FrontApp {
  readonly fetch: (request: Request) => Promise<Response>;
  readonly serveInfer: DirectInfer;
  /** Whether a model is decoupled: its ModelStreamInfer requests are relayed as streams (decoupled-relay.ts). */
  readonly isDecoupled?: DecoupledCheck;
}

export interface FrontOptions {
  /** ModelStreamInfer requests of one stream running at once before the stream stops reading (default 64). */
  readonly maxInflightPerStream?: number;
  readonly logger?: Logger;
}

type MethodName = keyof (typeof GRPCInferenceService)['method'];

/** Any server call with metadata, a deadline and a cancellation event. */
interface AnyCall {
  readonly metadata: Metadata;
  readonly cancelled: boolean;
  getDeadline(): Deadline;
  on(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
}

/** An AbortSignal that fires when the client cancels (grpc-js answers an expired deadline itself). */
function callSignal(call: AnyCall): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onCancel = (): void => controller.abort();
  call.on('cancelled', onCancel);
  if (call.cancelled) controller.abort();
  return { signal: controller.signal, dispose: () => call.off('cancelled', onCancel) };
}

/** A thrown error at the request's edge (its own fields) or an HTTP answer: never a crash. */
class Answered extends Error {
  constructor(readonly error: ReturnType<typeof statusError>) {
    super(error.message);
  }
}

type UnaryLogic<I, O> = (request: I, call: ServerUnaryCall<Incoming<I>, O>, signal: AbortSignal) => Promise<{ response: O; trailer?: Metadata }>;

function unary<I, O>(logic: UnaryLogic<I, O>, logger?: Logger): handleUnaryCall<Incoming<I>, O> {
  return (call, callback) => {
    const { signal, dispose } = callSignal(call);
    void (async () => {
      try {
        if (call.request instanceof MalformedMessage) throw call.request.error;
        const { response, trailer } = await logic(call.request, call, signal);
        callback(null, response, trailer);
      } catch (error) {
        if (error instanceof Answered) callback(error.error);
        else {
          const status = thrownError(error);
          if (status.code === GrpcCode.INTERNAL) logger?.error('gRPC front door: unexpected failure', { error: String(error) });
          callback(status);
        }
      } finally {
        dispose();
      }
    })();
  };
}

/** An in-process request to the gateway's own HTTP route, with the call's metadata as headers. */
async function route(app: FrontApp, call: AnyCall, signal: AbortSignal, method: 'GET' | 'POST', path: string, body?: string): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of metadataHeaders(call.metadata, call.getDeadline())) {
    try {
      headers.set(name, value);
    } catch {
      // a metadata value HTTP cannot carry: not a header the routes read
    }
  }
  if (body !== undefined) headers.set('content-type', 'application/json');
  return app.fetch(new Request(`http://gateway.grpc${path}`, { method, headers, signal, ...(body === undefined ? {} : { body }) }));
}

/** The route's JSON on success; its status as a gRPC error otherwise (the answer's headers as trailer). */
async function json(response: Response): Promise<{ value: JsonValue; trailer: Metadata }> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const trailer = answerMetadata(response.headers);
  if (response.status !== 200) throw new Answered(statusError(grpcCodeOfHttp(response.status), errorMessageOf(bytes, response.status), trailer));
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

export function inferenceFrontImplementation(app: FrontApp, options: FrontOptions = {}): UntypedServiceImplementation & Record<MethodName, unknown> {
  const logger = options.logger;
  const maxInflight = options.maxInflightPerStream ?? 64;
  const denied = (rpc: string, why: string) =>
    unary<unknown, never>(() => Promise.reject(new Answered(statusError(GrpcCode.PERMISSION_DENIED, `${rpc} is not available through the gateway: ${why}`))));
  const unimplemented = (rpc: string, why: string) =>
    unary<unknown, never>(() => Promise.reject(new Answered(statusError(GrpcCode.UNIMPLEMENTED, `${rpc} is not supported by the gateway: ${why}`))));
  const shm = 'shared memory cannot cross the network to the gateway; send tensors in the request';

  const handlers = {
    serverLive: unary(async (_req: unknown, call, signal) => {
      const res = await route(app, call, signal, 'GET', '/v2/health/live');
      await res.arrayBuffer();
      return { response: create(ServerLiveResponseSchema, { live: res.status === 200 }) };
    }, logger),
    serverReady: unary(async (_req: unknown, call, signal) => {
      const res = await route(app, call, signal, 'GET', '/v2/health/ready');
      await res.arrayBuffer();
      return { response: create(ServerReadyResponseSchema, { ready: res.status === 200 }) };
    }, logger),
    serverMetadata: unary(async (_req: unknown, call, signal) => {
      const { value, trailer } = await json(await route(app, call, signal, 'GET', '/v2'));
      return { response: fromRouteJson(ServerMetadataResponseSchema, value), trailer };
    }, logger),
    modelReady: unary(async (req: ModelReadyRequest, call, signal) => {
      const res = await route(app, call, signal, 'GET', `${modelPath(req.name, req.version, 'ModelReady')}/ready`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const trailer = answerMetadata(res.headers);
      // 200 ready, 400 not ready (Triton's HTTP answers); anything else (401, 403, 429...) is a status.
      if (res.status !== 200 && res.status !== 400) throw new Answered(statusError(grpcCodeOfHttp(res.status), errorMessageOf(bytes, res.status), trailer));
      return { response: create(ModelReadyResponseSchema, { ready: res.status === 200 }), trailer };
    }, logger),
    modelMetadata: unary(async (req: ModelMetadataRequest, call, signal) => {
      const { value, trailer } = await json(await route(app, call, signal, 'GET', modelPath(req.name, req.version, 'ModelMetadata')));
      return { response: fromRouteJson(ModelMetadataResponseSchema, value), trailer };
    }, logger),
    modelConfig: unary(async (req: ModelConfigRequest, call, signal) => {
      const { value, trailer } = await json(await route(app, call, signal, 'GET', `${modelPath(req.name, req.version, 'ModelConfig')}/config`));
      return { response: create(ModelConfigResponseSchema, { config: fromRouteJson(ModelConfigSchema, value) }), trailer };
    }, logger),
    modelStatistics: unary(async (req: ModelStatisticsRequest, call, signal) => {
      const path = req.name === '' ? (req.version === '' ? '/v2/models/stats' : undefined) : `${modelPath(req.name, req.version, 'ModelStatistics')}/stats`;
      if (path === undefined) throw new Answered(statusError(GrpcCode.INVALID_ARGUMENT, "ModelStatistics: a 'version' needs a model 'name'"));
      const { value, trailer } = await json(await route(app, call, signal, 'GET', path));
      return { response: fromRouteJson(ModelStatisticsResponseSchema, value), trailer };
    }, logger),
    repositoryIndex: unary(async (req: RepositoryIndexRequest, call, signal) => {
      if (req.repositoryName !== '') throw new Answered(statusError(GrpcCode.UNIMPLEMENTED, "RepositoryIndex: 'repository_name' specification is not supported"));
      const { value, trailer } = await json(await route(app, call, signal, 'POST', '/v2/repository/index', JSON.stringify({ ready: req.ready })));
      return { response: fromRouteJson(RepositoryIndexResponseSchema, { models: value }), trailer };
    }, logger),
    modelInfer: unary(async (req: ModelInferRequest, call, signal) => {
      const result = await frontInfer(app.serveInfer, req, call, signal);
      if (!result.ok) throw new Answered(answerError(result.answer));
      const trailer = answerMetadata(result.answer.headers);
      // x-cache (and the rest) also as initial metadata, for clients that only read headers.
      const initial = new Metadata();
      const cacheStatus = trailer.get('x-cache')[0];
      if (cacheStatus !== undefined) {
        initial.set('x-cache', String(cacheStatus));
        call.sendMetadata(initial);
      }
      return { response: result.response, trailer };
    }, logger),
    modelStreamInfer: (call: ServerDuplexStream<Incoming<ModelInferRequest>, ModelStreamInferResponse>) => streamInfer(app, call, maxInflight),
    repositoryModelLoad: denied('RepositoryModelLoad', "the fleet's model repository is managed on the nodes, not by tenants"),
    repositoryModelUnload: denied('RepositoryModelUnload', "the fleet's model repository is managed on the nodes, not by tenants"),
    systemSharedMemoryStatus: unimplemented('SystemSharedMemoryStatus', shm),
    systemSharedMemoryRegister: unimplemented('SystemSharedMemoryRegister', shm),
    systemSharedMemoryUnregister: unimplemented('SystemSharedMemoryUnregister', shm),
    cudaSharedMemoryStatus: unimplemented('CudaSharedMemoryStatus', shm),
    cudaSharedMemoryRegister: unimplemented('CudaSharedMemoryRegister', shm),
    cudaSharedMemoryUnregister: unimplemented('CudaSharedMemoryUnregister', shm),
    traceSetting: denied('TraceSetting', 'tracing is configured by the operator (--otlp-endpoint)'),
    logSettings: denied('LogSettings', 'logging is configured by the operator'),
  };
  return handlers as unknown as UntypedServiceImplementation & Record<MethodName, unknown>;
}

/** Triton's opt-in for ending a stream with a real status on the first error. */
const STREAM_ERROR_HEADER = 'triton_grpc_error';

function streamError(message: string, msg: ModelInferRequest | undefined): ModelStreamInferResponse {
  return create(ModelStreamInferResponseSchema, {
    errorMessage: message,
    inferResponse: create(ModelInferResponseSchema, { id: msg?.id ?? '', modelName: msg?.modelName ?? '', modelVersion: msg?.modelVersion ?? '' }),
  });
}

type StreamOutcome =
  | { readonly write: ModelStreamInferResponse }
  | { readonly end: ReturnType<typeof statusError> }
  /** A decoupled request whose responses are being written as they come; settles with its error, if any. */
  | { readonly relaying: Promise<StreamOutcome | undefined> };

/**
 * ModelStreamInfer as the node serves it: requests run concurrently (at most `maxInflight`; past it
 * the stream stops reading), answers are written in arrival order, an error travels in-band as
 * `error_message` and the stream goes on, unless the client opened it with `triton_grpc_error: true`.
 * Authentication failures (401) end the stream with UNAUTHENTICATED: no later request could pass.
 */
function streamInfer(app: FrontApp, call: ServerDuplexStream<Incoming<ModelInferRequest>, ModelStreamInferResponse>, maxInflight: number): void {
  const { signal, dispose } = callSignal(call);
  const statusOnError = call.metadata.get(STREAM_ERROR_HEADER).some((v) => String(v).toLowerCase() === 'true');
  let tail: Promise<void> = Promise.resolve();
  let inflight = 0;
  let inputEnded = false;
  let closed = false;
  const budget = new UnsentBudget();
  // Ending the stream (overflow, an error status, its end) stops the upstream calls it still relays.
  const stopped = new AbortController();
  const relaySignal = AbortSignal.any([signal, stopped.signal]);
  const finish = (error?: ReturnType<typeof statusError>): void => {
    if (closed) return;
    closed = true;
    dispose();
    stopped.abort();
    if (error === undefined) call.end();
    else call.emit('error', error);
  };
  /** A client that stops reading cannot make the gateway hold its answers without bound. */
  const send = (answer: ModelStreamInferResponse): void => {
    if (!closed && !budget.write(call, answer)) finish(statusError(GrpcCode.RESOURCE_EXHAUSTED, budget.overflowMessage()));
  };
  const failedWith = (failure: ReturnType<typeof statusError>, msg: ModelInferRequest | undefined): StreamOutcome =>
    statusOnError ? { end: failure } : { write: streamError(failure.details ?? failure.message, msg) };
  const failedAnswer = (answer: HttpAnswer, msg: ModelInferRequest): StreamOutcome =>
    answer.status === 401 ? { end: answerError(answer) } : failedWith(answerError(answer), msg);
  const relay = (msg: ModelInferRequest): Promise<StreamOutcome | undefined> =>
    relayDecoupled(app.serveInfer, msg, call, relaySignal, send).then(
      (answer) => (answer.status === 200 ? undefined : failedAnswer(answer, msg)),
      (error: unknown) => failedWith(thrownError(error), msg),
    );
  const run = async (incoming: Incoming<ModelInferRequest>): Promise<StreamOutcome> => {
    const msg = incoming instanceof MalformedMessage ? undefined : incoming;
    try {
      if (incoming instanceof MalformedMessage) throw incoming.error;
      if (await isDecoupled(app, incoming)) return { relaying: relay(incoming) };
      const result = await frontInfer(app.serveInfer, incoming, call, signal, '/inference.GRPCInferenceService/ModelStreamInfer');
      if (result.ok) return { write: create(ModelStreamInferResponseSchema, { inferResponse: result.response }) };
      return failedAnswer(result.answer, incoming);
    } catch (error) {
      return failedWith(thrownError(error), msg);
    }
  };
  const apply = (outcome: StreamOutcome | undefined): void => {
    if (closed || outcome === undefined || 'relaying' in outcome) return;
    if ('end' in outcome) finish(outcome.end);
    else send(outcome.write);
  };
  const settle = (): void => {
    inflight--;
    if (inflight < maxInflight && call.isPaused()) call.resume();
    if (inputEnded && inflight === 0) finish();
  };
  // Requests of one sequence run one after another, in stream order (the gateway registers a sequence
  // at its start, and the node's state moves one request at a time); other requests run concurrently.
  const sequenceTails = new Map<string, Promise<unknown>>();
  call.on('data', (incoming: Incoming<ModelInferRequest>) => {
    if (closed) return;
    inflight++;
    if (inflight >= maxInflight) call.pause();
    const sequence = sequenceKey(incoming);
    let result: Promise<StreamOutcome>;
    if (sequence === undefined) result = run(incoming);
    else {
      const previous = sequenceTails.get(sequence) ?? Promise.resolve();
      result = previous.then(() => run(incoming));
      const settled = result.then((outcome) => ('relaying' in outcome ? outcome.relaying : undefined));
      sequenceTails.set(sequence, settled);
      void settled.then(() => {
        if (sequenceTails.get(sequence) === settled) sequenceTails.delete(sequence);
      });
    }
    tail = tail.then(async () => {
      const outcome = await result;
      // A decoupled request writes as it goes: later answers do not wait for it to complete.
      if ('relaying' in outcome) void outcome.relaying.then(apply).finally(settle);
      else {
        apply(outcome);
        settle();
      }
    });
  });
  call.on('end', () => {
    inputEnded = true;
    if (inflight === 0) finish();
  });
  call.on('cancelled', () => {
    closed = true;
    dispose();
  });
  call.on('error', () => {
    // a write to a torn-down stream: 'cancelled' already stopped the work
  });
}

/** Whether `msg`'s model is decoupled (never for a gateway app that cannot tell). */
async function isDecoupled(app: FrontApp, msg: ModelInferRequest): Promise<boolean> {
  if (app.isDecoupled === undefined || msg.modelName === '') return false;
  return app.isDecoupled(msg.modelName, msg.modelVersion === '' ? undefined : msg.modelVersion);
}

/** The stream-local key of a request's sequence (model and `sequence_id`), undefined outside one. */
function sequenceKey(incoming: Incoming<ModelInferRequest>): string | undefined {
  if (incoming instanceof MalformedMessage) return undefined;
  const choice = incoming.parameters['sequence_id']?.parameterChoice;
  if (choice === undefined || choice.case === undefined) return undefined;
  const value = String(choice.value);
  if (value === '' || value === '0') return undefined;
  return `${incoming.modelName}\u0000${value}`;
}

/** `grpc.health.v1.Health/Check`: the gateway's readiness ('' or the inference service), as Triton answers. */
export function healthFrontImplementation(app: FrontApp, logger?: Logger): UntypedServiceImplementation {
  return {
    check: unary(async (req: HealthCheckRequest, call, signal) => {
      if (req.service !== '' && req.service !== InferenceServiceDesc.typeName) {
        throw new Answered(statusError(GrpcCode.NOT_FOUND, `unknown service '${req.service}'`));
      }
      const res = await route(app, call, signal, 'GET', '/v2/health/ready');
      await res.arrayBuffer();
      const status = res.status === 200 ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
      return { response: create(HealthCheckResponseSchema, { status }) };
    }, logger),
  };
}
