/**
 * ModelInfer and ModelStreamInfer: wire conversion around `core.infer`, cancellation, trailing load
 * metadata, and in-band stream errors.
 */
import { create } from '@bufbuild/protobuf';
import { Metadata } from '@grpc/grpc-js';
import type { ServerErrorResponse, handleUnaryCall } from '@grpc/grpc-js';
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import {
  InferParameterSchema,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type {
  ModelInferRequest,
  ModelInferResponse,
  ModelStreamInferResponse,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import { MalformedMessage, UnsentBudget, inferRequestFromProto, inferResponseToProto } from '../../../../shared/src/grpc/index.js';
import type { Incoming } from '../../../../shared/src/grpc/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import { extractTraceContext, type TraceContext } from '../../../../shared/src/tracing/index.js';
import type { InferOptions, NodeCore } from '../../server-api/index.js';
import { callSignal, toServiceError, type SurfaceCall } from './call-status.js';
import { loadFields, type LoadTrailerValues } from './load-trailer-values.js';
import { unary } from './unary.js';

/** Trailing metadata keys a gateway routes on (the model's load right after this request). */
export { QUEUE_DEPTH_KEY, INFLIGHT_KEY } from './load-trailer-values.js';
/** Triton's answer to ModelInfer on a decoupled model (UNIMPLEMENTED). */
export const GRPC_DECOUPLED_REFUSAL = "ModelInfer RPC doesn't support models with decoupled transaction policy";
/** Response parameter on every ModelStreamInfer answer: whether it is the request's last. */
export const FINAL_RESPONSE_PARAM = 'triton_final_response';
/** Request parameter: send the bare final flag of a decoupled model as an empty response. */
export const EMPTY_FINAL_RESPONSE_PARAM = 'triton_enable_empty_final_response';
/** Triton's opt-in for ending a stream with a real status on the first error (section 2.4). */
export const STREAM_ERROR_HEADER = 'triton_grpc_error';
/** The bound on answers a stream holds unsent (shared with the gateway's front door), re-exported for tests. */
export { MAX_UNSENT_STREAM_BYTES } from '../../../../shared/src/grpc/index.js';

/** The trailing load headers (QUEUE_DEPTH_KEY, INFLIGHT_KEY) for `modelName`, as header values. */
export function loadTrailerValues(core: NodeCore, modelName: string): LoadTrailerValues {
  let load;
  try {
    load = core.modelLoad(modelName);
  } catch {
    // Unknown or unloaded model: it carries no load, and the answer's status already says why.
    return loadFields(0, 0);
  }
  return loadFields(load.queued, load.inflight);
}

export function loadTrailer(core: NodeCore, modelName: string): Metadata {
  const md = new Metadata();
  for (const [key, value] of Object.entries(loadTrailerValues(core, modelName))) md.set(key, value);
  return md;
}

/** The caller's W3C trace context from the call's metadata (`traceparent`, `tracestate`), if valid. */
export function traceParentOf(metadata: Metadata): Pick<InferOptions, 'traceParent'> {
  return traceParentFrom((name) => {
    const value = metadata.get(name)[0];
    return value === undefined ? undefined : String(value);
  });
}

/** The same from any header reader (the first value of a header, by lower-case name). */
export function traceParentFrom(first: (name: string) => string | undefined): Pick<InferOptions, 'traceParent'> {
  const parent: TraceContext | undefined = extractTraceContext(first);
  return parent === undefined ? {} : { traceParent: parent };
}

export function modelInferHandler(core: NodeCore): handleUnaryCall<Incoming<ModelInferRequest>, ModelInferResponse> {
  return unary<ModelInferRequest, ModelInferResponse>(
    async (msg, call) => {
      const request = inferRequestFromProto(msg);
      const { signal, dispose } = callSignal(call);
      try {
        return inferResponseToProto(
          await core.infer(request, { signal, decoupledRefusal: GRPC_DECOUPLED_REFUSAL, ...traceParentOf(call.metadata) }),
        );
      } finally {
        dispose();
      }
    },
    { trailer: (msg) => loadTrailer(core, msg?.modelName ?? '') },
  );
}

export interface StreamOptions {
  /** Requests of one stream running at once; past it the stream stops reading (gRPC flow control). */
  readonly maxInflightPerStream: number;
}

/** Marks an error that must end the stream with a status instead of travelling in-band. */
class StreamFailure {
  constructor(readonly error: unknown) {}
}

/**
 * What the stream handler uses of its call: grpc-js's ServerDuplexStream on grpc-js's port, RawBidiCall
 * (raw-bidi-call.ts) on the raw HTTP/2 front.
 */
export interface StreamInferCall extends SurfaceCall {
  readonly metadata: Metadata;
  on(event: 'data', listener: (incoming: Incoming<ModelInferRequest>) => void): unknown;
  on(event: 'end' | 'cancelled' | 'error', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
  isPaused(): boolean;
  write(answer: ModelStreamInferResponse, callback: () => void): unknown;
  end(): unknown;
  emit(event: 'error', error: ServerErrorResponse): boolean;
}

function errorResponse(err: unknown, msg: ModelInferRequest | undefined): ModelStreamInferResponse {
  return create(ModelStreamInferResponseSchema, {
    errorMessage: toTesseraError(err).message,
    // Triton echoes the request's identity so a client can tell which of its requests failed.
    inferResponse: create(ModelInferResponseSchema, {
      id: msg?.id ?? '',
      modelName: msg?.modelName ?? '',
      modelVersion: msg?.modelVersion ?? '',
    }),
  });
}

function streamAnswer(response: InferResponse, final: boolean): ModelStreamInferResponse {
  const proto = inferResponseToProto(response);
  proto.parameters[FINAL_RESPONSE_PARAM] = create(InferParameterSchema, { parameterChoice: { case: 'boolParam', value: final } });
  return create(ModelStreamInferResponseSchema, { inferResponse: proto });
}

/**
 * Requests on one stream run concurrently (so the dynamic batcher can combine them) but their answers
 * are written in arrival order. An error is written in-band and the stream goes on, unless the client
 * opened it with `triton_grpc_error: true`, in which case the first error ends it with a real status.
 */
export function modelStreamInferHandler(
  core: NodeCore,
  options: StreamOptions,
): (call: StreamInferCall) => void {
  return (call) => {
    const { signal: callAborted, dispose } = callSignal(call);
    // Aborted by the client (callSignal) or by this stream's own bound on unsent answers.
    const overflow = new AbortController();
    const signal = AbortSignal.any([callAborted, overflow.signal]);
    const budget = new UnsentBudget();
    const statusOnError = call.metadata.get(STREAM_ERROR_HEADER).some((v) => String(v).toLowerCase() === 'true');
    // Every request of the stream continues the trace the stream was opened in.
    const trace = traceParentOf(call.metadata);
    let tail: Promise<void> = Promise.resolve();
    let inflight = 0;
    let inputEnded = false;
    let closed = false;

    const finish = (err?: unknown): void => {
      if (closed) return;
      closed = true;
      dispose();
      if (err === undefined) call.end();
      else call.emit('error', toServiceError(err));
    };

    /** Writes an answer, or ends the stream when the client has left too much unread. */
    const send = (answer: ModelStreamInferResponse): void => {
      if (closed || budget.write(call, answer)) return;
      const error = TesseraError.resourceExhausted(budget.overflowMessage());
      overflow.abort(error);
      finish(error);
    };

    const settle = (): void => {
      inflight--;
      if (inflight < options.maxInflightPerStream && call.isPaused()) call.resume();
      if (inputEnded && inflight === 0) finish();
    };

    const run = async (incoming: Incoming<ModelInferRequest>): Promise<ModelStreamInferResponse | StreamFailure> => {
      const msg = incoming instanceof MalformedMessage ? undefined : incoming;
      try {
        if (incoming instanceof MalformedMessage) throw incoming.error;
        const request = inferRequestFromProto(incoming);
        const response = await core.infer(request, { signal, ...trace });
        return streamAnswer(response, true);
      } catch (err) {
        return statusOnError ? new StreamFailure(err) : errorResponse(err, msg);
      }
    };

    /**
     * A decoupled model's responses are written as the model sends them (they may interleave with
     * other requests' answers, as in Triton); its error, if any, in-band when it ends.
     */
    const runDecoupled = async (msg: ModelInferRequest): Promise<void> => {
      let finalSent = false;
      try {
        const request = inferRequestFromProto(msg);
        await core.infer(request, {
          signal,
          ...trace,
          onResponse: (response, final) => {
            finalSent ||= final;
            send(streamAnswer(response, final));
          },
        });
        if (!finalSent && request.parameters[EMPTY_FINAL_RESPONSE_PARAM] === true) {
          send(streamAnswer({ id: request.id, modelName: request.modelName, modelVersion: msg.modelVersion, outputs: [] }, true));
        }
      } catch (err) {
        if (closed) return;
        if (statusOnError) finish(err);
        else send(errorResponse(err, msg));
      }
    };

    const isDecoupled = (incoming: Incoming<ModelInferRequest>): incoming is ModelInferRequest => {
      if (incoming instanceof MalformedMessage) return false;
      try {
        return core.isDecoupled(incoming.modelName, incoming.modelVersion === '' ? undefined : incoming.modelVersion);
      } catch {
        return false; // an unknown model: the ordinary path answers its error
      }
    };

    call.on('data', (incoming: Incoming<ModelInferRequest>) => {
      if (closed) return;
      inflight++;
      if (inflight >= options.maxInflightPerStream) call.pause();
      if (isDecoupled(incoming)) {
        void runDecoupled(incoming).finally(settle);
        return;
      }
      const result = run(incoming);
      // Chaining on `tail` keeps answers in request order however the inferences finish.
      tail = tail.then(async () => {
        const answer = await result;
        if (answer instanceof StreamFailure) finish(answer.error);
        else send(answer);
        settle();
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
      // A write to a torn-down stream; the 'cancelled' path above already stopped the work.
    });
  };
}
