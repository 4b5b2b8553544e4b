/**
 * One ModelStreamInfer request of a decoupled model through the gateway: through the same infer
 * pipeline as every request (front-infer.ts: authentication, the tenant's models, tiers and limits,
 * admission, deadlines, breakers, routing, tenant-scoped sequences), but served by an upstream
 * ModelStreamInfer call (DispatchContext.onResponse → h2-stream-infer.ts), never cached, each
 * response the node sends written to the client as it arrives.
 *
 * Triton's final-response flag as the client asked for it: upstream the gateway always asks for the
 * empty final response (it then knows when a request is complete); that empty response
 * (`triton_final_response: true`, no outputs) reaches the client only when its request set
 * `triton_enable_empty_final_response: true`. The response keeps the client's request id and its own
 * `sequence_id` (the node saw the tenant-scoped one).
 */
import { create } from '@bufbuild/protobuf';
import type { Deadline, Metadata } from '@grpc/grpc-js';
import { ModelStreamInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { inferRequestFromProto, inferResponseToProto } from '../../../../shared/src/grpc/index.js';
import { encodeInferRequestBody, INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import type { DirectInfer } from '../../core/app/index.js';
import { BodyOverLimitError, type HttpAnswer } from '../../core/http/index.js';
import { headerReader, metadataHeaders, requireModelName, versionOf } from './call-bridge.js';

const STREAM_PATH = '/inference.GRPCInferenceService/ModelStreamInfer';
const EMPTY_FINAL_RESPONSE_PARAM = 'triton_enable_empty_final_response';
const FINAL_RESPONSE_PARAM = 'triton_final_response';

/** Whether the client asked for the empty final response (a bool parameter, as Triton reads it). */
export function wantsEmptyFinal(msg: ModelInferRequest): boolean {
  const choice = msg.parameters[EMPTY_FINAL_RESPONSE_PARAM]?.parameterChoice;
  return choice?.case === 'boolParam' && choice.value;
}

/**
 * Runs `msg` and hands each response to `write` as a ModelStreamInferResponse. Resolves with the
 * pipeline's answer (200 once the node completed the request, otherwise the error to report);
 * request-side problems throw TesseraError before anything is sent.
 */
export async function relayDecoupled(
  serveInfer: DirectInfer,
  msg: ModelInferRequest,
  call: { readonly metadata: Metadata; getDeadline(): Deadline },
  signal: AbortSignal,
  write: (answer: ModelStreamInferResponse) => void,
): Promise<HttpAnswer> {
  const model = requireModelName(msg.modelName, 'ModelStreamInfer');
  const version = versionOf(msg.modelVersion);
  const emptyFinal = wantsEmptyFinal(msg);
  const clientSequenceId = msg.parameters['sequence_id'];
  // The HTTP form the pipeline reads refuses `triton_*` keys: the upstream call sets this one itself.
  const parameters = { ...msg.parameters };
  delete parameters[EMPTY_FINAL_RESPONSE_PARAM];
  const request = inferRequestFromProto({ ...msg, parameters });
  const outputs = request.outputs?.map((o) => ({ ...o, binaryData: true }));
  const encoded = encodeInferRequestBody({ ...request, ...(outputs === undefined ? {} : { outputs }) }, { binaryInputs: true, binaryDataOutput: true });
  const body = typeof encoded.body === 'string' ? new TextEncoder().encode(encoded.body) : encoded.body;
  const headerLength = Object.entries(encoded.headers).find(([name]) => name.toLowerCase() === INFER_HEADER_LENGTH)?.[1];
  const headers = metadataHeaders(call.metadata, call.getDeadline(), { 'content-type': 'application/octet-stream' });
  if (headerLength !== undefined) headers.set(INFER_HEADER_LENGTH, headerLength);
  else headers.delete(INFER_HEADER_LENGTH);

  const onResponse = (response: InferResponse): void => {
    const final = response.parameters?.[FINAL_RESPONSE_PARAM] === true;
    if (final && response.outputs.length === 0 && !emptyFinal) return;
    const proto = inferResponseToProto(response);
    proto.id = msg.id;
    if (clientSequenceId !== undefined && proto.parameters['sequence_id'] !== undefined) proto.parameters['sequence_id'] = clientSequenceId;
    write(create(ModelStreamInferResponseSchema, { inferResponse: proto }));
  };
  return serveInfer(
    {
      path: STREAM_PATH,
      headers: headerReader(headers),
      readBody: async (maxBytes) => {
        // The same error as an HTTP body over the limit (readTierBody turns it into the tier's 413).
        if (body.length > maxBytes) throw new BodyOverLimitError(maxBytes, String(body.length));
        return body;
      },
      signal,
      onResponse,
    },
    model,
    version,
  );
}
