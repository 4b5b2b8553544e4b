/**
 * `inference.GRPCInferenceService` and `grpc.health.v1.Health` on the gateway, as grpc-js handlers.
 * Inference goes through the infer pipeline (front-infer.ts); every other unary RPC runs the logic of
 * unary-front.ts (the gateway's own HTTP route for it, in process), which the raw HTTP/2 port also
 * runs in place (in-place-front.ts).
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, status as GrpcCode } from '@grpc/grpc-js';
import type { Deadline, ServerDuplexStream, ServerUnaryCall, UntypedServiceImplementation, handleUnaryCall } from '@grpc/grpc-js';
import { ModelInferResponseSchema, ModelStreamInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { GRPCInferenceService, ModelInferRequest, ModelStreamInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { MalformedMessage, UnsentBudget, type Incoming } from '../../../../shared/src/grpc/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { DecoupledCheck, DirectInfer } from '../../core/app/index.js';
import type { HttpAnswer } from '../../core/http/index.js';
import { answerError, answerMetadata, grpcCodeOfHttp, metadataHeaders, statusError, thrownError, errorMessageOf, answerMetadataValues } from './call-bridge.js';
import { relayDecoupled } from './decoupled-relay.js';
import { frontInfer } from './front-infer.js';
import { Answered, healthUnaryFrontLogic, inferenceUnaryFrontLogic, type UnaryFrontLogic } from './unary-front.js';

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
        if (error instanceof Answered) callback(statusError(error.code, error.message, metadataOf(error.trailer)));
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

/** Trailing metadata from plain lower-case keys and values. */
function metadataOf(values: Readonly<Record<string, string>> | undefined): Metadata {
  const md = new Metadata();
  if (values !== undefined) for (const [name, value] of Object.entries(values)) md.set(name, value);
  return md;
}

/** unary-front.ts's logic as a grpc-js handler: the call's metadata and deadline as its headers. */
function fromFrontLogic(logic: UnaryFrontLogic, logger?: Logger): handleUnaryCall<Incoming<never>, unknown> {
  return unary(async (req: never, call, signal) => {
    const { response, trailer } = await logic(req, { headers: () => metadataHeaders(call.metadata, call.getDeadline()), signal });
    return trailer === undefined ? { response } : { response, trailer: metadataOf(trailer) };
  }, logger);
}

function fromFrontLogicTable(table: Record<string, UnaryFrontLogic>, logger?: Logger): Record<string, handleUnaryCall<Incoming<never>, unknown>> {
  return Object.fromEntries(Object.entries(table).map(([name, logic]) => [name, fromFrontLogic(logic, logger)]));
}

export function inferenceFrontImplementation(app: FrontApp, options: FrontOptions = {}): UntypedServiceImplementation & Record<MethodName, unknown> {
  const logger = options.logger;
  const maxInflight = options.maxInflightPerStream ?? 64;
  const handlers = {
    ...fromFrontLogicTable(inferenceUnaryFrontLogic(app), logger),
    modelInfer: unary(async (req: ModelInferRequest, call, signal) => {
      const result = await frontInfer(app.serveInfer, req, call, signal);
      if (!result.ok) throw answeredOf(result.answer);
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

/** `grpc.health.v1.Health/Check` (unary-front.ts's logic) as a grpc-js handler. */
export function healthFrontImplementation(app: FrontApp, logger?: Logger): UntypedServiceImplementation {
  return fromFrontLogicTable(healthUnaryFrontLogic(app), logger) as UntypedServiceImplementation;
}

/** A failed HTTP answer as a status, its rate-limit and retry headers as trailing metadata. */
function answeredOf(answer: HttpAnswer): Answered {
  return new Answered(grpcCodeOfHttp(answer.status), errorMessageOf(answer.body, answer.status), answerMetadataValues(answer.headers));
}
